"""The data folder: where every file of Kept's memory lives and how it is written.

DESIGN: one module (`layout`) names every path and lock file of the folder; `files` writes
them atomically (temporary file, fsync, rename) and appends with fsync; `store` is the
boundary the rest of Kept goes through, composed of one component per part of the folder,
each owning its files and returning typed records: `memory_file` (MEMORY.md) with
`versions` (its versions, their kinds stored as tokens), `instructions` (INSTRUCTIONS.md),
`history_files` (HISTORY.md and its archives, in the format of `history`) and
`session_files` (the journals, done/, the sessions' locks). Code on an event loop goes
through `aio`, whose every call runs off the loop.
"""
