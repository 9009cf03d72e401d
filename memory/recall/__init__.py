"""The read side: searching what Kept remembers, where a line came from, and watching files.

DESIGN: `search` is grep and the chat's `search_history` tool over HISTORY.md, its archives
and every journal; a `pattern` (literal or regex) with its `scope` (dates, private
sessions) picks a route, `scan` reads the files, exact by construction, and a regex runs in
a `child` process it can be stopped in. `index` (with `index_file`, its on-disk form) is a
derived, per-machine trigram cache that only decides which files the scan may skip;
`places` lists the files searched, newest first, from the data folder's layout.
`provenance` tells where each line of MEMORY.md came from; `watch` follows the memory files
on disk so what a user sees stays current.
"""
