"""The read side: searching what Kept remembers, where a line came from, and watching files.

DESIGN: `search` scans HISTORY.md, its archives and every journal, exact by construction;
`index` is a derived, per-machine trigram cache that only decides which files the scan may
skip; `places` lists the files searched; `provenance` tells where each line of MEMORY.md
came from; `watch` follows the memory files on disk so what a user sees stays current.
"""
