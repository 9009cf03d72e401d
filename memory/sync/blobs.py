"""Many files of one commit read at once: one `git cat-file --batch`, not a git per file
(a month of another device's sessions is some 600 files)."""

from __future__ import annotations

import subprocess

from memory.sync.git import GitError, GitFailure, Repo


def read_blobs(repo: Repo, rev: str, paths: list[str]) -> dict[str, bytes | None]:
    """Each path's bytes at `rev`; None for a path `rev` does not have."""
    if not paths:
        return {}
    request = b"".join(f"{rev}:{path}\n".encode("utf-8", "surrogateescape") for path in paths)
    try:
        done = subprocess.run(
            ["git", "-C", str(repo.root), "cat-file", "--batch"],
            input=request,
            capture_output=True,
            env=repo.env(read_only=True),
            timeout=repo.timeout,
            check=False,
        )
    except FileNotFoundError:
        raise GitError(GitFailure.MISSING, "git is not installed (no git on the PATH).") from None
    except subprocess.TimeoutExpired:
        raise GitError(GitFailure.OTHER, f"git cat-file took over {repo.timeout:g} s.") from None
    if done.returncode != 0:
        raise GitError(GitFailure.OTHER, "git cat-file failed: the repository may be damaged.")
    return _parse(done.stdout, paths)


def _parse(out: bytes, paths: list[str]) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    at = 0
    for path in paths:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) < 3 or header[-1] == b"missing":
            found[path] = None
            continue
        size = int(header[2])
        found[path] = out[at : at + size]
        at += size + 1  # the blob, then a newline
    return found
