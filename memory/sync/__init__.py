"""Sync: one memory on every machine, through git or any file-sync tool.

DESIGN: a data folder shared by several machines (memory.data.layout) has three files every
machine writes: MEMORY.md, INSTRUCTIONS.md and HISTORY.md (with its months). Everything
else is written by one device under its id, or never leaves the machine (PER_MACHINE). So
syncing is merging those three, and taking the rest from whoever wrote it:

- `merge`: the pure merges (three-way lines for MEMORY.md and INSTRUCTIONS.md, where both
  sides' changes to the same lines keep ours and say so; a union on entry keys for history);
- `shared`: another device's side of a shared file merged into this folder through the
  store (its lock, compare-and-swap against the text read, a version "merged from");
- `proposals`: the other side of lines both changed, held for the user, never dropped;
- `copies` and `copies_merge`: the conflict copies sync tools leave, merged then removed;
- `git`, `blobs` and `gitsync`: `kept sync` over the git CLI, never letting git write the
  work tree; `ignore`: .gitignore and .stignore from PER_MACHINE; `status`: where it stands.

Every step is safe to repeat: merging a side already merged changes nothing, so a sync cut
short at any point is finished by the next one.
"""
