"""Consolidation: a finished session becomes memory only when a model really saved it.

DESIGN: `run` picks the pending sessions and their order (`schedule`: retries and holds;
`estimate`: what a long one would cost, asked before it is spent); `walk` takes one session
through the chain (`chain`: which models, their policy, whether a change waits for review)
in parts (`chunks`), and accepts only a valid `save_memory` call (`reply`, asked by
`prompt`). The edits it proposes are checked against what the user said (`edits`,
`grounding`), held for review when the model is not yet trusted (`trust`, `review`), and
written by the write-ahead commit (`commit`), whole or not at all. Every result is a
`Consolidation` whose `outcome.Status` each consumer matches on, with a `Cause` the app
words when the user can act. `redact` keeps credentials from leaving, `log` reads the
record of attempts back, and `tidy` is the one whole-file rewrite a user may accept.
"""
