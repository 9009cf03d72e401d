"""The data folder: where every file of Kept's memory lives and how it is written.

DESIGN: `layout` names every path and lock file of the folder once; `files` writes them
atomically (temporary file, fsync, rename), appends with fsync and takes the cross-process
locks. `store.MemoryStore` is the one façade the rest of Kept goes through; behind it each
part owns its files and returns typed records: `memory_file` (MEMORY.md: edits, remember,
undo, restore; a refusal is a `MemoryRefused` carrying its kind), `versions` (every version,
its kind stored as a token), `instructions` (INSTRUCTIONS.md), `history` and
`history_files` (HISTORY.md's paragraphs and archives), `session_files` (journals settling
to done/, the lock sweep). `aio.AsyncStore` offers the same calls to the app, each run off
the event loop; `files.forbid_on_loop()` makes a lock taken on the loop fail in tests.
"""
