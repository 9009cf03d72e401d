"""Tests of the Textual app through its pilot: screens, keys, snapshots."""
