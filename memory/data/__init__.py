"""The data folder: where every file of Kept's memory lives and how it is written.

DESIGN: one module (`layout`) names every path and lock file of the folder; `files` writes
them atomically (temporary file, fsync, rename) and appends with fsync; `store` is the
boundary the rest of Kept goes through. MEMORY.md and its versions, INSTRUCTIONS.md,
HISTORY.md and its archives, and proposals each have one owner; what they return are typed
records, never raw text to be parsed again by a caller.
"""
