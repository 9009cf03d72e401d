"""Errors in the user's words, shared by the app and the command line."""

from __future__ import annotations


def os_error(exc: OSError) -> str:
    """An OSError in one sentence that names its file once."""
    what = str(exc.strerror or exc)
    if exc.filename and str(exc.filename) not in what:
        return f"{exc.filename}: {what}"
    return what
