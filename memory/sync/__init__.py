"""Sync: one memory on every machine."""
