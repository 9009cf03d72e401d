"""How a git call failed, in one sentence: its kind, read from git's stderr (C locale), and
git's own reason, with no credential in it."""

from __future__ import annotations

import re
from enum import StrEnum

# A URL's user part may hold a password or be a token itself, so all of it goes.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s'\"]+@")


class GitFailure(StrEnum):
    """Why a git call failed, as the caller decides on it."""

    MISSING = "missing"  # git is not installed
    NOT_A_REPO = "not_a_repo"  # the data folder is not a repository (or does not exist)
    NO_REMOTE = "no_remote"  # no remote named origin
    UNREACHABLE = "unreachable"  # network, host, dns, refused connection, timeout
    REFUSED = "refused"  # authentication or permission denied
    REJECTED = "rejected"  # the remote has commits this branch lacks (non-fast-forward)
    OTHER = "other"


# Checked in this order on git's stderr (C locale): the first kind that matches wins.
_NEEDLES: tuple[tuple[GitFailure, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            GitFailure.REFUSED,
            r"permission denied|authentication failed|could not read (username|password)"
            r"|access denied|host key verification failed|returned error: 40[13]",
        ),
        (
            GitFailure.REJECTED,
            # the last two: another push moved the branch while this one was sent
            r"\[rejected\]|non-fast-forward|\(fetch first\)|updates were rejected"
            r"|\(failed to update ref\)|remote: error: cannot lock ref",
        ),
        (
            GitFailure.UNREACHABLE,
            r"could not resolve|connection (refused|reset|closed)|timed out|network is unreachable"
            r"|no route to host|failed to connect|couldn't connect|remote end hung up"
            r"|does not appear to be a git repository|could not read from remote repository"
            r"|unable to access|repository not found",
        ),
        (GitFailure.NOT_A_REPO, r"fatal: not a git repository|cannot change to"),
        (GitFailure.NO_REMOTE, r"no such remote"),
    )
)


def redact(text: str) -> str:
    """`text` without the user part of any URL in it (`https://user:secret@host` -> `https://host`)."""
    return _USERINFO.sub(r"\1", text)


def classify(stderr: str) -> GitFailure:
    """The kind of failure git's stderr (in the C locale) describes."""
    return next((kind for kind, needle in _NEEDLES if needle.search(stderr)), GitFailure.OTHER)


# What git adds after any failure to reach a remote: the reason is on another line.
_BOILERPLATE = re.compile(
    r"could not read from remote repository|please make sure you have|and the repository exists",
    re.IGNORECASE,
)


def detail(stderr: str) -> str:
    """git's own reason, in a form that ends a sentence: its first fatal, error or ssh line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    told = [
        line for line in lines if not line.startswith("hint:") and not _BOILERPLATE.search(line)
    ]
    prefixed = (line for line in told if line.startswith(("fatal:", "error:", "ssh:")))
    line = next(prefixed, None) or next(iter(told), None) or next(iter(lines), "")
    line = re.sub(r"^(fatal|error): ", "", line)
    line = re.sub(r"^unable to access '[^']*': ", "", line)  # the URL is in the sentence
    line = re.sub(r"^'[^']*' (?=does not appear)", "it ", line)  # and so is the path
    line = line.rstrip(".")
    if len(line) > 1 and line[1].islower():
        line = line[0].lower() + line[1:]
    return line


class GitError(Exception):
    """A git call failed: its `kind`, and a one-sentence str() with no credential in it."""

    def __init__(self, kind: GitFailure, sentence: str) -> None:
        self.kind = kind
        self.sentence = redact(" ".join(sentence.split()))
        super().__init__(self.sentence)

    def __str__(self) -> str:
        return self.sentence
