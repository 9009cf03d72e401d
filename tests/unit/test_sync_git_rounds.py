"""`kept sync` over git with two machines and a bare repository on disk: what each does,
synced in random orders, ends the same on both with nothing lost and nothing twice."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from memory.sync.git import Repo
from memory.sync.gitsync import sync
from memory.sync.proposals import accept_sync, sync_proposals
from tests.sync_world import Machine, act, check, consolidate, machine


@pytest.fixture(autouse=True)
def own_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git with no user config: a machine's own identity and settings never leak in."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


def _two(tmp_path: Path) -> tuple[Machine, Machine, Path]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop, desk = machine(tmp_path / "laptop", "laptop"), machine(tmp_path / "desk", "desk")
    for m in (laptop, desk):
        Repo(m.store.root).init(str(remote))
    return laptop, desk, remote


def _settle(machines: list[Machine]) -> None:
    """A final sync of both, and again, so each has the other's last merge."""
    for m in (*machines, *machines):
        sync(m.store)


@pytest.mark.parametrize("seed", [7, 1913, 424242])
def test_random_work_and_syncs_end_the_same_on_both_machines(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    laptop, desk, _ = _two(tmp_path)
    machines = [laptop, desk]
    for n in range(40):
        m = rng.choice(machines)
        if rng.random() < 0.3:
            sync(m.store)
        else:
            act(rng, m, n)
    _settle(machines)
    check(machines)
    assert laptop.store.read_memory().text == desk.store.read_memory().text
    assert laptop.store.history_path.read_bytes() == desk.store.history_path.read_bytes()


def test_the_same_line_changed_on_both_is_a_choice_never_a_loss(tmp_path: Path) -> None:
    laptop, desk, _ = _two(tmp_path)
    consolidate(laptop, 1)
    sync(laptop.store)
    sync(desk.store)
    for m, words in ((laptop, "Porto"), (desk, "Lisbon")):
        current = m.store.read_memory()
        m.store.save_edit(current.text.replace("fact 1", f"lives in {words}"), current.digest)
    sync(laptop.store)
    report = sync(desk.store)
    assert report.proposals == 1
    both = desk.store.read_memory().text  # until the choice, both sides' lines are there
    assert "lives in Lisbon" in both and "lives in Porto" in both
    sync(laptop.store)  # and on the other machine too: its own line was not dropped
    assert laptop.store.read_memory().text == both
    (waiting,) = sync_proposals(desk.store)
    assert waiting.device == "laptop" and any("Porto" in line for line in waiting.theirs)
    accept_sync(desk.store, waiting)
    chosen = desk.store.read_memory().text
    assert "lives in Porto" in chosen and "lives in Lisbon" not in chosen
    assert desk.store.versions()[-1].describe() == "merged from laptop"
    assert sync_proposals(desk.store) == []
    _settle([laptop, desk])
    assert laptop.store.read_memory().text == desk.store.read_memory().text == chosen


def test_nothing_to_do_makes_no_commit(tmp_path: Path) -> None:
    laptop, desk, _ = _two(tmp_path)
    consolidate(laptop, 1)
    _settle([laptop, desk])
    head = Repo(laptop.store.root).head()
    report = sync(laptop.store)
    assert not report.pushed and not report.devices and Repo(laptop.store.root).head() == head


def test_private_sessions_and_per_machine_files_never_leave_the_machine(tmp_path: Path) -> None:
    laptop, desk, remote = _two(tmp_path)
    private = laptop.store.new_session("test/model", private=True)
    private.append({"role": "user", "content": "off the record"})
    # One an older Kept made: its id does not say it is private, its header does.
    older = laptop.store.sessions_dir / "20261101-100000-abcdef.jsonl"
    older.write_text('{"kept":"session","id":"20261101-100000-abcdef","private":true}\n')
    consolidate(laptop, 1)
    sync(laptop.store)
    listed = subprocess.run(
        ["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert not any("private" in name or "abcdef" in name for name in listed)
    assert not any(name.startswith(("local/", "index.")) or name == ".lock" for name in listed)
    assert any(name.startswith("sessions/laptop/done/") for name in listed)
    sync(desk.store)
    with pytest.raises(LookupError):
        desk.store.find_session(private.id)


def test_locks_a_killed_git_left_do_not_stop_the_next_sync(tmp_path: Path) -> None:
    laptop, desk, _ = _two(tmp_path)
    consolidate(laptop, 1)
    sync(laptop.store)
    git = laptop.store.root / ".git"
    (git / "index.lock").write_text("")
    (git / "refs" / "heads" / "main.lock").write_text("")
    consolidate(laptop, 2)
    assert sync(laptop.store).pushed
    assert not (git / "index.lock").exists()
    sync(desk.store)
    check([laptop, desk])


def test_a_push_rejected_because_another_machine_pushed_first_is_merged_and_pushed_again(
    tmp_path: Path,
) -> None:
    laptop, desk, _ = _two(tmp_path)
    consolidate(laptop, 1)
    _settle([laptop, desk])
    consolidate(desk, 2)  # not synced yet: the desk pushes it while the laptop syncs
    consolidate(laptop, 3)
    hook = laptop.store.root / ".git" / "hooks" / "pre-push"
    flag = tmp_path / "pushed-first"
    desk_git = f"env -u GIT_DIR -u GIT_INDEX_FILE -u GIT_WORK_TREE git -C '{desk.store.root}'"
    who = "-c user.name=desk -c user.email=desk@example.invalid"
    hook.write_text(
        "#!/bin/sh\n"
        f"[ -e '{flag}' ] && exit 0\n"
        f"touch '{flag}'\n"
        f"{desk_git} add -A && {desk_git} {who} commit -q -m 'desk: its session' "
        f"&& {desk_git} push -q origin main\n"
    )
    hook.chmod(0o755)
    report = sync(laptop.store)
    assert flag.exists() and report.pushed and "desk" in report.devices
    _settle([laptop, desk])
    check([laptop, desk])


def test_two_empty_folders_set_up_one_after_the_other_go_on_syncing(tmp_path: Path) -> None:
    """Each machine's first sync has nothing of the other's to take: the merge is still
    recorded, or the next push would be refused for ever."""
    laptop, desk, _ = _two(tmp_path)
    sync(laptop.store)
    sync(desk.store)
    laptop.store.remember("Ana likes tea")
    assert sync(laptop.store).pushed
    sync(desk.store)
    assert "Ana likes tea" in desk.store.read_memory().text
    desk.store.remember("Ana moved to Lisbon")
    assert sync(desk.store).pushed
    sync(laptop.store)
    assert laptop.store.read_memory().text == desk.store.read_memory().text


def test_an_attachment_deleted_on_one_machine_stays_where_a_session_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The laptop deletes its session, and with it a file no session it knows names; the
    desk attached the same file (stored once, by its digest) before hearing of that: the
    desk keeps it."""
    from memory.chat.attachments import keep, read_attachment, storage, stored_path
    from memory.sessions.delete import delete_session

    monkeypatch.setattr(storage, "COLLECT_GRACE", 0.0)
    laptop, desk, _ = _two(tmp_path)
    photo = tmp_path / "photo.txt"
    photo.write_text("the same file on both machines\n")
    journal = laptop.store.new_session("test/model")
    journal.append(
        {
            "role": "user",
            "content": "look",
            "attachments": [keep(laptop.store, read_attachment(photo))],
        }
    )
    journal.mark_pending(close=True)
    _settle([laptop, desk])
    record = keep(desk.store, read_attachment(photo))
    theirs = desk.store.new_session("test/model")
    theirs.append({"role": "user", "content": "look too", "attachments": [record]})
    delete_session(laptop.store, journal.id)
    assert not stored_path(laptop.store, record).exists()
    sync(laptop.store)
    sync(desk.store)
    assert stored_path(desk.store, record).exists()
