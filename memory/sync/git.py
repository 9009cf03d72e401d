"""A thin, safe wrapper over the git CLI: what `kept sync` asks of a data folder's repository.

Why the git CLI and not a git library: it uses the user's own credentials, ssh config and
credential helpers as they are, and adds no dependency; Kept never stores a credential.

The work tree is the data folder itself (`.git` inside it), and Kept's own writes there are
atomic, so git NEVER writes the work tree here: no checkout, merge, pull, reset or stash.
The caller reads blobs with `show()`, writes the files itself, then stages them; commits
are made with plumbing (`write-tree`, `commit-tree`, a compare-and-swap `update-ref`), so
no hook runs on a commit either.

Every call is `git -C ROOT …` with LC_ALL=C (stderr is classified by its words), never a
prompt (GIT_TERMINAL_PROMPT=0, no stdin, its own session so ssh finds no terminal), and
GIT_CEILING_DIRECTORIES set to ROOT's parent, so a data folder inside another repository
(a home folder kept in git) is never taken for it. A call past its timeout is killed with
all its children. Calls block: the caller runs them off the event loop.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

REMOTE = "origin"
# Variables that would point git at another repository than ROOT's.
_REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
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


def _detail(stderr: str) -> str:
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


@dataclass(frozen=True)
class _Done:
    code: int
    out: bytes
    err: str


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill git and every child it started (ssh, a credential helper) holding our pipes."""
    if sys.platform == "win32":
        process.kill()
    else:
        with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
            os.killpg(process.pid, signal.SIGKILL)


class Repo:
    """The git repository whose work tree is the data folder `root`."""

    def __init__(self, root: Path, *, timeout: float = 120) -> None:
        self.root = root
        self.timeout = timeout

    # -- running git -------------------------------------------------------------------

    def env(self, read_only: bool) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_ENV}
        env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0")
        env["GIT_CEILING_DIRECTORIES"] = str(self.root.resolve().parent)
        if read_only:
            env["GIT_OPTIONAL_LOCKS"] = "0"
        return env

    def _run(
        self, *args: str, read_only: bool = False, ok: tuple[int, ...] = (0,), where: str = ""
    ) -> _Done:
        """Run `git -C root ARGS`; a code outside `ok` raises GitError (naming `where`, the
        remote's URL, if the call talks to it)."""
        command = ["git", "-C", str(self.root), *args]
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env(read_only),
                start_new_session=True,
            )
        except FileNotFoundError:
            raise GitError(
                GitFailure.MISSING, "git is not installed (no git on the PATH)."
            ) from None
        try:
            out, err = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()
            sentence = f"Could not reach {where or self.root}: no answer in {self.timeout:g} s."
            raise GitError(GitFailure.UNREACHABLE, sentence) from None
        done = _Done(process.returncode, out, err.decode("utf-8", "replace"))
        if done.code not in ok:
            raise self._error(args, done.err, where)
        return done

    def _text(self, *args: str, read_only: bool = True) -> str:
        return self._run(*args, read_only=read_only).out.decode("utf-8", "replace").strip()

    def _error(self, args: tuple[str, ...], stderr: str, where: str = "") -> GitError:
        kind = classify(stderr)
        detail = _detail(stderr) or "no reason given"
        if kind is GitFailure.NOT_A_REPO:
            return GitError(kind, f"{self.root} is not a git repository.")
        if kind is GitFailure.NO_REMOTE:
            return GitError(kind, f"{self.root} has no remote named {REMOTE}.")
        if kind is GitFailure.UNREACHABLE:
            return GitError(kind, f"Could not reach {where or 'the remote'}: {detail}.")
        if kind is GitFailure.REFUSED:
            return GitError(kind, f"{where or 'The remote'} refused access: {detail}.")
        if kind is GitFailure.REJECTED:
            return GitError(
                kind, f"{where or 'The remote'} has commits that are not here yet: push rejected."
            )
        verb = next((arg for arg in args if not arg.startswith("-") and "=" not in arg), "")
        return GitError(kind, f"git {verb} failed: {detail}.")

    def _needs_remote(self) -> str:
        remote = self.remote()
        if remote is None:
            raise GitError(GitFailure.NO_REMOTE, f"{self.root} has no remote named {REMOTE}.")
        return remote

    # -- the repository ----------------------------------------------------------------

    def is_repo(self) -> bool:
        """Whether `root` is itself the top of a git work tree (never a folder above it)."""
        if not self.root.is_dir():
            return False
        done = self._run("rev-parse", "--show-toplevel", read_only=True, ok=(0, 128))
        if done.code != 0:
            if classify(done.err) is GitFailure.NOT_A_REPO:
                return False
            raise self._error(("rev-parse",), done.err)
        top = done.out.decode("utf-8", "replace").strip()
        return Path(top).resolve() == self.root.resolve()

    def init(self, remote: str, branch: str = "main") -> None:
        """Make `root` a repository on `branch` whose origin is `remote`; again, only the remote."""
        if not self.is_repo():
            self.root.mkdir(parents=True, exist_ok=True)
            self._run("init", "--quiet", "--initial-branch", branch)
        current = self.remote()
        if current is None:
            self._run("remote", "add", REMOTE, remote)
        elif current != remote:
            self._run("remote", "set-url", REMOTE, remote)

    def remote(self) -> str | None:
        """origin's URL, or None when there is no origin."""
        done = self._run("remote", "get-url", REMOTE, read_only=True, ok=(0, 2))
        return done.out.decode("utf-8", "replace").strip() if done.code == 0 else None

    def branch(self) -> str:
        """The branch HEAD names (it may have no commit yet)."""
        return self._text("symbolic-ref", "--short", "HEAD")

    def identity_args(self, device: str) -> list[str]:
        """`-c` options naming Kept on `device` as the author, for what the user has not set."""
        name = re.sub(r"[^a-z0-9-]+", "-", device.lower()).strip("-") or "device"
        fallback = {"user.name": "Kept", "user.email": f"kept@{name}.invalid"}
        args: list[str] = []
        for key, value in fallback.items():
            done = self._run("config", "--get", key, read_only=True, ok=(0, 1))
            if done.code != 0 and not self._identity_in_env(key):
                args += ["-c", f"{key}={value}"]
        return args

    @staticmethod
    def _identity_in_env(key: str) -> bool:
        part = "NAME" if key == "user.name" else "EMAIL"
        return all(os.environ.get(f"GIT_{who}_{part}") for who in ("AUTHOR", "COMMITTER"))

    # -- commits -------------------------------------------------------------------------

    def stage_all(self) -> None:
        """Stage every change of the work tree, honouring .gitignore (`git add -A`)."""
        self._run("add", "--all")

    def head(self) -> str | None:
        """HEAD's commit, or None before the first commit."""
        return self._commit_or_none("HEAD")

    def commit(self, message: str, device: str) -> str | None:
        """Commit what is staged and return the commit; None when nothing is staged."""
        tree = self._text("write-tree", read_only=False)
        head = self.head()
        if tree == (self.tree_of(head) if head else self._empty_tree()):
            return None
        new = self._commit_tree(tree, [head] if head else [], message, device)
        self._move_branch(new, head)
        return new

    def record_merge(self, theirs: str, message: str, device: str) -> str:
        """Record the staged tree as the merge of HEAD and `theirs`; return the new head.

        A fast-forward (no new commit) when HEAD is behind `theirs` and the staged tree is
        theirs; a plain commit (or none) when `theirs` is already in HEAD's history; otherwise
        a commit with both parents. The branch moves by compare-and-swap, never the work tree.
        """
        tree = self._text("write-tree", read_only=False)
        head = self.head()
        if head is not None and self.is_ancestor(theirs, head):  # theirs is already here
            new = head if tree == self.tree_of(head) else None
            parents = [head]
        elif (head is None or self.is_ancestor(head, theirs)) and tree == self.tree_of(theirs):
            new, parents = theirs, []
        else:
            new, parents = None, [head, theirs] if head else [theirs]
        if new is None:
            new = self._commit_tree(tree, parents, message, device)
        if new != head:
            self._move_branch(new, head)
        return new

    def _commit_tree(self, tree: str, parents: list[str], message: str, device: str) -> str:
        parent_args = [arg for parent in parents for arg in ("-p", parent)]
        identity = self.identity_args(device)
        return self._text(
            *identity, "commit-tree", tree, *parent_args, "-m", message, read_only=False
        )

    def _move_branch(self, new: str, old: str | None) -> None:
        ref = f"refs/heads/{self.branch()}"
        # An empty old value means "the branch must not exist yet".
        self._run("update-ref", "-m", "kept sync", ref, new, old or "")

    def _empty_tree(self) -> str:
        return self._text("hash-object", "-t", "tree", "--stdin")  # stdin is empty

    def _commit_or_none(self, rev: str) -> str | None:
        done = self._run(
            "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", read_only=True, ok=(0, 1)
        )
        return done.out.decode().strip() if done.code == 0 else None

    # -- the remote ----------------------------------------------------------------------

    def fetch(self) -> str | None:
        """Fetch origin; the remote branch's commit, or None when the remote has no branch."""
        where = self._needs_remote()
        self._run("fetch", "--quiet", "--prune", "--no-tags", REMOTE, where=where)
        return self._commit_or_none(f"refs/remotes/{REMOTE}/{self.branch()}")

    def push(self) -> None:
        """Push the branch to origin and track it; a non-fast-forward is REJECTED."""
        where = self._needs_remote()
        ref = f"refs/heads/{self.branch()}"
        refspec = f"{ref}:{ref}"
        self._run("push", "--quiet", "--set-upstream", REMOTE, refspec, where=where)

    # -- reading commits -----------------------------------------------------------------

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of `a` and `b`, or None when they share none."""
        done = self._run("merge-base", a, b, read_only=True, ok=(0, 1))
        return done.out.decode().strip() if done.code == 0 else None

    def is_ancestor(self, a: str, b: str) -> bool:
        """Whether `a` is `b` or one of its ancestors."""
        done = self._run("merge-base", "--is-ancestor", a, b, read_only=True, ok=(0, 1))
        return done.code == 0

    def show(self, rev: str, path: str) -> bytes | None:
        """The bytes of `path` at `rev`, or None when `rev` has no such file."""
        done = self._run("cat-file", "blob", f"{rev}:{path}", read_only=True, ok=(0, 128))
        if done.code == 0:
            return done.out
        if "does not exist in" in done.err or "exists on disk, but not in" in done.err:
            return None
        raise self._error(("show",), done.err)

    def changed(self, a: str | None, b: str) -> list[str]:
        """The paths whose content differs between `a` and `b` (all of `b`'s when `a` is None)."""
        if a is None:
            out = self._run("ls-tree", "-r", "-z", "--name-only", b, read_only=True).out
        else:
            args = ("diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b)
            out = self._run(*args, read_only=True).out
        return [name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name]

    def tree_of(self, rev: str) -> str:
        """The tree `rev` records."""
        return self._text("rev-parse", "--verify", f"{rev}^{{tree}}")

    # -- recovery ------------------------------------------------------------------------

    def clear_stale_lock(self) -> bool:
        """Remove the locks a killed git left behind (the index's, a branch's, HEAD's);
        whether there was one. Safe only because the caller holds Kept's own sync lock:
        no other sync is running in this data folder.
        """
        git = self.root / ".git"
        found = [*git.glob("*.lock"), *(git / "refs").rglob("*.lock")] if git.is_dir() else []
        for lock in found:
            lock.unlink(missing_ok=True)
        return bool(found)
