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
from pathlib import Path

from memory.sync.git_errors import GitError as GitError
from memory.sync.git_errors import GitFailure as GitFailure
from memory.sync.git_errors import classify as classify
from memory.sync.git_errors import detail as _detail
from memory.sync.git_errors import redact as redact

REMOTE = "origin"
BRANCH = "main"  # the one branch Kept keeps: HEAD always names it, nothing checks out another
MARK = "kept.sync"  # set in a repository Kept made: one of the user's own is never synced
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
        # No background gc: a detached `gc --auto` could hold locks the next sync clears;
        # `tidy()` runs it in its place, under Kept's sync lock.
        command = ["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-C", str(self.root)]
        command += args
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

    def is_kept(self) -> bool:
        """Whether Kept made this repository (a user's own is never synced, nor changed)."""
        done = self._run("config", "--get", MARK, read_only=True, ok=(0, 1))
        return done.code == 0 and done.out.strip() == b"true"

    def init(self, remote: str) -> str | None:
        """Make `root` Kept's repository, on BRANCH, whose origin is `remote`; again, only
        the remote changes. Returns the remote it replaced, if any. GitError for a
        repository Kept did not make."""
        if not self.is_repo():
            self.root.mkdir(parents=True, exist_ok=True)
            self._run("init", "--quiet", "--initial-branch", BRANCH)
            self._run("config", MARK, "true")
        elif not self.is_kept():
            raise GitError(
                GitFailure.OTHER,
                f"{self.root} is already a git repository of its own, which Kept leaves "
                "alone: move its .git folder away, or set KEPT_DATA_DIR to another folder.",
            )
        current = self.remote()
        if current is None:
            self._run("remote", "add", REMOTE, remote)
        elif current != remote:
            self._run("remote", "set-url", REMOTE, remote)
        return current if current != remote else None

    def tidy(self) -> None:
        """Pack loose objects when git thinks it is time (gc.auto's own threshold)."""
        self._run("-c", "gc.auto=6700", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")

    def remote(self) -> str | None:
        """origin's URL, or None when there is no origin."""
        done = self._run("remote", "get-url", REMOTE, read_only=True, ok=(0, 2))
        return done.out.decode("utf-8", "replace").strip() if done.code == 0 else None

    def branch(self) -> str:
        """The branch Kept commits to and syncs (it may have no commit yet)."""
        return BRANCH

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

    def staged_new(self, folder: str) -> list[str]:
        """Paths under `folder` staged since HEAD's commit (every staged one before it)."""
        head = self.head()
        if head is None:
            args: tuple[str, ...] = ("ls-files", "--cached", "-z", "--", folder)
        else:
            args = ("diff", "--cached", "--name-only", "--diff-filter=A", "-z", head, "--", folder)
        out = self._run(*args).out
        return [name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name]

    def unstage(self, paths: list[str]) -> None:
        """Take `paths` out of the index (the files stay as they are)."""
        if paths:
            self._run("rm", "--cached", "--quiet", "--", *paths)

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
