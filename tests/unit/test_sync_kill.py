"""kill -9 at any point of `kept sync`, with a consolidation saving beside it: the next sync
completes, and nothing is lost or doubled on either machine."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memory.sync.git import Repo
from memory.sync.gitsync import sync
from tests.support import subprocess_env
from tests.sync_world import Machine, act, check, consolidate, machine

KEPT = Path(sys.executable).with_name("kept")


@pytest.fixture(autouse=True)
def own_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


def _start_sync(m: Machine) -> subprocess.Popen[bytes]:
    env = subprocess_env(KEPT_DATA_DIR=str(m.store.root), KEPT_DEVICE=m.name)
    return subprocess.Popen(
        [str(KEPT), "sync"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _one_sync_takes(m: Machine) -> float:
    """How long one `kept sync` takes here, so that kills land all through it."""
    started = time.monotonic()
    process = _start_sync(m)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out, err)
    return time.monotonic() - started


def test_kept_sync_killed_anywhere_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(5)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop, desk = machine(tmp_path / "laptop", "laptop"), machine(tmp_path / "desk", "desk")
    for m in (laptop, desk):
        Repo(m.store.root).init(str(remote))
        consolidate(m, 0 if m is laptop else 1)
    span = _one_sync_takes(laptop)
    killed = 0
    for n in range(2, 14):
        act(rng, laptop, n)
        act(rng, desk, 100 + n)
        sync(desk.store)
        process = _start_sync(laptop)
        # Half the time a consolidation saves while the sync runs (and is killed).
        saving = threading.Thread(target=consolidate, args=(laptop, 200 + n))
        if rng.random() < 0.5:
            saving.start()
        # Past the interpreter's start (a quarter of the run), anywhere in the sync itself.
        time.sleep(rng.uniform(span / 4, span))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            killed += 1
        process.communicate(timeout=300)
        if saving.ident is not None:
            saving.join(timeout=300)
    for m in (laptop, desk, laptop, desk):
        sync(m.store)
    check([laptop, desk])
    assert laptop.store.read_memory().text == desk.store.read_memory().text
    assert killed, "no sync was killed: the test tested nothing"
