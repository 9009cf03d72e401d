"""Consolidation: a finished session becomes memory only when a model really saved it.

DESIGN: `run` walks the chain over a session's chunks and accepts only a valid
`save_memory` call (`reply`); the edits it proposes are checked against what the user said
(`edits`, `grounding`), routed through review when the model is not yet trusted (`trust`,
`review`), and written by the write-ahead commit (`commit`), whole or not at all. `prompt`
is what the model is asked, `redact` keeps credentials from leaving, `log` reads the record
of attempts back, and `tidy` is the one whole-file rewrite a user may accept.
"""
