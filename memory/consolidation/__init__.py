"""Consolidation: a finished session becomes memory only when a model really saved it.

DESIGN: `run` prepares one consolidation under the session's claim (and takes every pending
session in turn); `walk` cuts its transcript into parts (`chunks`), asks the chain (`chain`)
part by part and accepts only a valid `save_memory` call (`reply`); the edits it proposes are
checked against what the user said (`edits`, `grounding`), routed through review when the
model is not yet trusted (`trust`, `review`), and written by the write-ahead commit
(`commit`), whole or not at all. Each outcome is one `Status` on a `Consolidation`
(`outcome`), with a `Cause` when the user has a next step, worded by the app. `schedule`
says when a failed session is retried, `estimate` what saving would take, `prompt` is what
the model is asked, `redact` keeps credentials from leaving, `log` reads the record of
attempts back, and `tidy` is the one whole-file rewrite a user may accept.
"""
