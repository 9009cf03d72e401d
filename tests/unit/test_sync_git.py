"""memory.sync.git against real git: two data folders and a bare repository in tmp_path, no
network. HOME is a temporary folder and every GIT_* variable is unset, so the user's own git
config never leaks in."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memory.sync.git import GitError, GitFailure, Repo


@pytest.fixture(autouse=True)
def clean_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def git(cwd: Path, *args: str) -> str:
    """Plain git, as a user would type it, to set up and to look behind the wrapper."""
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(path)], check=True)
    return path


def folder(tmp_path: Path, name: str, remote: Path | str) -> Repo:
    repo = Repo(tmp_path / name)
    repo.init(str(remote))
    return repo


def save(repo: Repo, files: dict[str, str], device: str) -> str:
    for name, text in files.items():
        (repo.root / name).write_text(text, encoding="utf-8")
    repo.stage_all()
    commit = repo.commit(f"sync from {device}", device)
    assert commit is not None
    return commit


def take(repo: Repo, theirs: str, message: str, device: str) -> str:
    """What a sync does with the other side's files when it has none of its own to merge."""
    for name in repo.changed(repo.head(), theirs):
        (repo.root / name).write_bytes(repo.show(theirs, name) or b"")
    repo.stage_all()
    return repo.record_merge(theirs, message, device)


def assert_one_sentence(error: GitError) -> None:
    text = str(error)
    assert text.endswith(".") and "\n" not in text and "Traceback" not in text, text


def test_init_twice_is_idempotent_and_replaces_the_remote(tmp_path: Path, bare: Path) -> None:
    repo = Repo(tmp_path / "laptop")
    assert not repo.is_repo()
    repo.init(str(bare))
    repo.init(str(bare))
    assert repo.is_repo() and repo.remote() == str(bare) and repo.branch() == "main"
    assert git(repo.root, "remote") == "origin"
    repo.init(str(tmp_path / "elsewhere.git"))
    assert repo.remote() == str(tmp_path / "elsewhere.git")


def test_a_folder_inside_another_repository_is_not_taken_for_it(tmp_path: Path) -> None:
    git(tmp_path, "init", "--quiet")  # a home folder kept in git
    (tmp_path / "data").mkdir()
    repo = Repo(tmp_path / "data")
    assert not repo.is_repo()
    with pytest.raises(GitError) as caught:
        repo.stage_all()
    assert caught.value.kind is GitFailure.NOT_A_REPO
    assert git(tmp_path, "ls-files") == ""


def test_commit_with_nothing_staged_returns_none(tmp_path: Path, bare: Path) -> None:
    repo = folder(tmp_path, "laptop", bare)
    assert repo.commit("nothing", "laptop") is None
    assert repo.head() is None
    first = save(repo, {"MEMORY.md": "- tea\n"}, "laptop")
    assert repo.head() == first
    assert repo.commit("nothing again", "laptop") is None
    assert repo.head() == first
    assert git(repo.root, "log", "-1", "--format=%an <%ae>") == "Kept <kept@laptop.invalid>"


def test_the_users_own_identity_is_kept(tmp_path: Path, bare: Path) -> None:
    git(tmp_path, "config", "--global", "user.name", "Ada")
    git(tmp_path, "config", "--global", "user.email", "ada@example.org")
    repo = folder(tmp_path, "laptop", bare)
    assert repo.identity_args("laptop") == []
    save(repo, {"MEMORY.md": "- tea\n"}, "laptop")
    assert git(repo.root, "log", "-1", "--format=%an <%ae>") == "Ada <ada@example.org>"


def test_fetch_from_an_empty_bare_repository_is_none(tmp_path: Path, bare: Path) -> None:
    assert folder(tmp_path, "laptop", bare).fetch() is None


def test_push_then_fetch_on_the_other_side(tmp_path: Path, bare: Path) -> None:
    laptop, desktop = folder(tmp_path, "laptop", bare), folder(tmp_path, "desktop", bare)
    (laptop.root / "a b é.md").write_text("odd name\n", encoding="utf-8")
    pushed = save(laptop, {"MEMORY.md": "- tea\n"}, "laptop")
    laptop.push()
    theirs = desktop.fetch()
    assert theirs == pushed
    assert desktop.changed(None, theirs) == ["MEMORY.md", "a b é.md"]
    assert desktop.show(theirs, "MEMORY.md") == b"- tea\n"
    assert desktop.show(theirs, "INSTRUCTIONS.md") is None
    assert desktop.head() is None and not (desktop.root / "MEMORY.md").exists()
    later = save(laptop, {"MEMORY.md": "- tea\n- rain\n", "HISTORY.md": "one\n"}, "laptop")
    assert laptop.changed(pushed, later) == ["HISTORY.md", "MEMORY.md"]


def test_a_non_fast_forward_push_is_rejected(tmp_path: Path, bare: Path) -> None:
    laptop, desktop = folder(tmp_path, "laptop", bare), folder(tmp_path, "desktop", bare)
    save(laptop, {"MEMORY.md": "- tea\n"}, "laptop")
    laptop.push()
    save(desktop, {"MEMORY.md": "- coffee\n"}, "desktop")
    with pytest.raises(GitError) as caught:
        desktop.push()
    assert caught.value.kind is GitFailure.REJECTED
    assert_one_sentence(caught.value)
    assert str(bare) in str(caught.value)


@pytest.mark.parametrize(
    ("remote", "ssh"),
    [
        ("MISSING_PATH", None),
        # GIT_SSH_VARIANT: git passes the port to this "ssh" instead of refusing the URL.
        ("ssh://127.0.0.1:1/x", "false"),
        ("https://user:secret@127.0.0.1:1/x", None),
    ],
)
def test_an_unreachable_remote_is_one_sentence_without_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remote: str, ssh: str | None
) -> None:
    if ssh is not None:
        monkeypatch.setenv("GIT_SSH_COMMAND", ssh)
        monkeypatch.setenv("GIT_SSH_VARIANT", "ssh")
    url = str(tmp_path / "nowhere" / "x.git") if remote == "MISSING_PATH" else remote
    repo = folder(tmp_path, "laptop", url)
    save(repo, {"MEMORY.md": "- tea\n"}, "laptop")
    for call in (repo.fetch, repo.push):
        with pytest.raises(GitError) as caught:
            call()
        assert caught.value.kind is GitFailure.UNREACHABLE, str(caught.value)
        assert_one_sentence(caught.value)
        assert "secret" not in str(caught.value) and "user" not in str(caught.value)
        assert "secret" not in repr(caught.value)


def test_a_refused_login_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An "ssh" that answers as a server does to a key it does not know.
    refusal = "echo 'git@127.0.0.1: Permission denied (publickey).' >&2; exit 255; :"
    monkeypatch.setenv("GIT_SSH_COMMAND", refusal)
    repo = folder(tmp_path, "laptop", "ssh://git@127.0.0.1/x")
    with pytest.raises(GitError) as caught:
        repo.fetch()
    assert caught.value.kind is GitFailure.REFUSED
    assert_one_sentence(caught.value)
    assert "permission denied (publickey)" in str(caught.value).lower()


def test_a_remote_that_never_answers_is_unreachable_once_the_timeout_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The "ssh" outlives git and holds its stderr: the wrapper must kill them both.
    monkeypatch.setenv("GIT_SSH_COMMAND", "sleep 600; true")
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    repo = Repo(tmp_path / "laptop")
    repo.init("ssh://127.0.0.1/x")
    repo.timeout = 1  # only the call that talks to the remote: the rest may be slow here
    with pytest.raises(GitError) as caught:
        repo.fetch()
    assert caught.value.kind is GitFailure.UNREACHABLE
    assert_one_sentence(caught.value)


def test_without_a_remote_or_a_repository_the_kind_says_which(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "laptop")
    with pytest.raises(GitError) as caught:
        repo.head()
    assert caught.value.kind is GitFailure.NOT_A_REPO
    git(tmp_path, "init", "--quiet", "laptop")
    for call in (repo.fetch, repo.push):
        with pytest.raises(GitError) as caught:
            call()
        assert caught.value.kind is GitFailure.NO_REMOTE
        assert_one_sentence(caught.value)


def test_git_missing_from_the_path_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bare: Path
) -> None:
    repo = folder(tmp_path, "laptop", bare)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for call in (repo.is_repo, repo.fetch):
        with pytest.raises(GitError) as caught:
            call()
        assert caught.value.kind is GitFailure.MISSING
        assert_one_sentence(caught.value)


def test_record_merge_fast_forwards_when_the_trees_match(tmp_path: Path, bare: Path) -> None:
    laptop, desktop = folder(tmp_path, "laptop", bare), folder(tmp_path, "desktop", bare)
    theirs = save(laptop, {"MEMORY.md": "- tea\n"}, "laptop")
    laptop.push()
    assert desktop.fetch() == theirs
    # The desktop has no commit of its own: it writes the laptop's files and follows it.
    (desktop.root / "MEMORY.md").write_bytes(desktop.show(theirs, "MEMORY.md") or b"")
    desktop.stage_all()
    (desktop.root / "MEMORY.md").write_text("- tea\n- written after staging\n", encoding="utf-8")
    assert desktop.record_merge(theirs, "merge", "desktop") == theirs
    assert desktop.head() == theirs
    assert git(desktop.root, "rev-list", "--count", "HEAD") == "1"
    text = (desktop.root / "MEMORY.md").read_text(encoding="utf-8")
    assert text == "- tea\n- written after staging\n"
    # Later, behind again with nothing of its own: a fast-forward again, no merge commit.
    later = save(laptop, {"HISTORY.md": "a session\n"}, "laptop")
    laptop.push()
    assert desktop.fetch() == later
    (desktop.root / "MEMORY.md").write_text("- tea\n", encoding="utf-8")
    assert take(desktop, later, "merge", "desktop") == later


def test_record_merge_makes_a_two_parent_commit_and_never_touches_the_work_tree(
    tmp_path: Path, bare: Path
) -> None:
    laptop, desktop = folder(tmp_path, "laptop", bare), folder(tmp_path, "desktop", bare)
    base = save(laptop, {"MEMORY.md": "- tea\n"}, "laptop")
    laptop.push()
    assert desktop.fetch() == base
    assert take(desktop, base, "merge", "desktop") == base
    ours = save(desktop, {"MEMORY.md": "- tea\n- coffee\n"}, "desktop")
    theirs = save(laptop, {"HISTORY.md": "laptop's session\n"}, "laptop")
    laptop.push()
    assert desktop.fetch() == theirs
    assert desktop.merge_base(ours, theirs) == base
    assert desktop.is_ancestor(base, ours) and not desktop.is_ancestor(theirs, ours)
    # The caller writes the merged files itself, stages, and records the merge.
    (desktop.root / "HISTORY.md").write_bytes(desktop.show(theirs, "HISTORY.md") or b"")
    desktop.stage_all()
    (desktop.root / "MEMORY.md").write_text("not staged\n", encoding="utf-8")
    merged = desktop.record_merge(theirs, "merge from laptop", "desktop")
    assert git(desktop.root, "rev-list", "--parents", "-1", merged).split() == [
        merged,
        ours,
        theirs,
    ]
    assert desktop.head() == merged
    assert desktop.show(merged, "MEMORY.md") == b"- tea\n- coffee\n"
    assert desktop.show(merged, "HISTORY.md") == b"laptop's session\n"
    assert (desktop.root / "MEMORY.md").read_text(encoding="utf-8") == "not staged\n"
    desktop.push()
    assert laptop.fetch() == merged


def test_a_stale_index_lock_is_cleared(tmp_path: Path, bare: Path) -> None:
    repo = folder(tmp_path, "laptop", bare)
    (repo.root / "MEMORY.md").write_text("- tea\n", encoding="utf-8")
    (repo.root / ".git" / "index.lock").write_bytes(b"")  # left by a killed git
    with pytest.raises(GitError) as caught:
        repo.stage_all()
    assert_one_sentence(caught.value)
    assert repo.clear_stale_lock() is True
    repo.stage_all()
    assert repo.commit("tea", "laptop") is not None
    assert repo.clear_stale_lock() is False


def test_show_of_a_missing_path_is_none_and_of_a_bad_revision_an_error(
    tmp_path: Path, bare: Path
) -> None:
    repo = folder(tmp_path, "laptop", bare)
    head = save(repo, {"MEMORY.md": "- tea\n"}, "laptop")
    (repo.root / "draft.md").write_text("on disk only\n", encoding="utf-8")
    assert repo.show(head, "nowhere/MEMORY.md") is None
    assert repo.show(head, "draft.md") is None
    with pytest.raises(GitError) as caught:
        repo.show("no-such-branch", "MEMORY.md")
    assert caught.value.kind is GitFailure.OTHER
    assert_one_sentence(caught.value)


def test_a_repository_of_the_users_own_is_left_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    subprocess.run(["git", "init", "-q", "-b", "master", str(notes)], check=True)
    subprocess.run(["git", "-C", str(notes), "remote", "add", "origin", "/backup.git"], check=True)
    with pytest.raises(GitError, match="is already a git repository of its own"):
        Repo(notes).init(str(tmp_path / "remote.git"))
    assert Repo(notes).remote() == "/backup.git"
