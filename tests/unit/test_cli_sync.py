"""`kept sync init|status|review` and `kept sync` as a user types them: one sentence for
every failure, nothing lost, and the next sync catching up."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.cli.main import main
from memory import MemoryStore
from memory.sync.git import Repo
from memory.sync.gitsync import sync


@pytest.fixture(autouse=True)
def own_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _here() -> MemoryStore:
    return MemoryStore(Path(os.environ["KEPT_DATA_DIR"])).ensure()


def _bare(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return remote


def test_sync_before_init_says_how_to_set_it_up_and_writes_the_ignore_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["sync"]) == 0
    assert "`kept sync init REMOTE` sets up sync" in capsys.readouterr().out
    stignore = (Path(os.environ["KEPT_DATA_DIR"]) / ".stignore").read_text()
    assert "/sessions/*/*-private-*" in stignore and "/local/" in stignore


def test_an_unreachable_remote_is_one_sentence_and_the_next_sync_catches_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _here().remember("Ana likes tea")
    missing = tmp_path / "not-yet.git"
    assert main(["sync", "init", str(missing)]) == 1
    out, err = capsys.readouterr()
    assert f"syncs with {missing} as device this-machine" in out
    assert err.count("\n") == 1 and "Nothing was lost" in err and "Traceback" not in err
    assert main(["sync", "status"]) == 0
    assert "failed: Could not reach" in capsys.readouterr().out
    subprocess.run(["git", "init", "-q", "--bare", str(missing)], check=True)
    assert main(["sync"]) == 0
    assert "pushed" in capsys.readouterr().out
    assert main(["sync", "status"]) == 0
    status = capsys.readouterr().out
    assert "this-machine (this device): last change synced" in status
    assert "failed" not in status


def test_review_lists_lines_both_devices_changed_and_takes_the_other_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = _bare(tmp_path)
    here = _here()
    here.remember("lives in Porto")
    assert main(["sync", "init", str(remote)]) == 0
    desk = MemoryStore(tmp_path / "desk", device="desk").ensure()
    Repo(desk.root).init(str(remote))
    sync(desk)
    current = desk.read_memory()
    desk.save_edit(current.text.replace("Porto", "Lisbon"), current.digest)
    sync(desk)
    current = here.read_memory()
    here.save_edit(current.text.replace("Porto", "Braga"), current.digest)
    capsys.readouterr()
    assert main(["sync"]) == 0
    assert "wait for you (`kept sync review`)" in capsys.readouterr().out
    assert main(["sync", "review"]) == 0
    listed = capsys.readouterr().out
    assert (
        "this device and desk changed the same lines" in listed and "+- lives in Lisbon" in listed
    )
    ident = listed.split("kept sync review take:", 1)[1].split("`", 1)[0]
    assert main(["sync", "review", f"take:{ident}"]) == 0
    assert "MEMORY.md has desk's lines." in capsys.readouterr().out
    chosen = here.read_memory().text
    assert "lives in Lisbon" in chosen and "Braga" not in chosen
    assert main(["sync", "review", f"take:{ident}"]) == 2  # decided: gone


def test_without_git_the_conflict_copies_a_sync_tool_left_are_merged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    here = _here()
    here.remember("Ana likes tea")
    copy = here.root / "MEMORY.sync-conflict-20261201-101010-ABCDEF1.md"
    copy.write_text("- Ana likes tea\n- Ana moved to Lisbon\n")
    assert main(["sync"]) == 0
    assert "Merged 1 conflict copy." in capsys.readouterr().out
    assert not copy.exists() and "moved to Lisbon" in here.read_memory().text


def test_blame_names_the_device_of_each_line_once_there_are_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = _bare(tmp_path)
    here = _here()
    here.remember("Ana likes tea")
    assert main(["memory", "blame"]) == 0
    alone = capsys.readouterr().out
    assert "this-machine" not in alone  # one device: no column for it
    desk = MemoryStore(tmp_path / "desk", device="desk").ensure()
    desk.remember("Ana moved to Lisbon")
    Repo(desk.root).init(str(remote))
    sync(desk)
    assert main(["sync", "init", str(remote)]) == 0
    capsys.readouterr()
    assert main(["memory", "blame"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert any(r.startswith("this-machine") and r.endswith("- Ana likes tea") for r in rows)
    assert any(r.startswith("desk") and r.endswith("- Ana moved to Lisbon") for r in rows)


def test_without_git_log_and_status_still_answer_and_sync_says_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _here().remember("Ana likes tea")
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert main(["log"]) == 0
    assert main(["sync", "status"]) == 0
    assert "no git remote" in capsys.readouterr().out
    assert main(["sync", "init", "/x.git"]) == 1
    err = capsys.readouterr().err
    assert "git is not installed" in err and "Traceback" not in err


def test_a_bad_device_name_is_one_sentence_for_every_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEPT_DEVICE", "Bad Name!")
    for argv in (["log"], ["sync", "status"], ["memory", "show"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is not a device name Kept can use" in err


def test_a_remote_with_a_password_in_it_is_never_shown_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["sync", "init", "https://ana:s3cret@127.0.0.1:1/kept.git"])
    assert main(["sync", "status"]) == 0
    out, err = capsys.readouterr()
    assert "s3cret" not in out + err and "https://127.0.0.1:1/kept.git" in out
