"""The one way a verb fails: it raises CliError, and `main` prints it."""

from __future__ import annotations

from app.errors import os_error

__all__ = ["FAILED", "USAGE", "CliError", "os_error"]

FAILED, USAGE = 1, 2  # exit codes: it ran and did not succeed; it could not run as asked


class CliError(Exception):
    """A verb that cannot go on: `message` is printed as is on stderr (one sentence that
    names the verb, e.g. "kept import: no file at x."), and `kept` exits with `code`."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
