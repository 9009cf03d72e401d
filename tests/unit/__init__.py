"""Tests of one part at a time: real files in a temporary folder, the loopback fake provider;
no Textual app, no terminal."""
