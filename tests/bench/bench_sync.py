"""`kept sync` against a bare repository on disk: with nothing to do, beside `git fetch`
alone; and merging a month of another machine's sessions (300), beside git merging the same
commits its own way (which merges no MEMORY.md and no history: the floor, not a rival).

Goals (issue "One memory on every machine"): nothing to do ≤ 0.5 s beside `git fetch`;
300 sessions merged ≤ 5 s. Medians of 5 for the first; one merge each for the second.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memory.sync.git import Repo
from memory.sync.gitsync import sync
from tests.sync_world import consolidate, machine

RUNS = 5
SESSIONS = 300


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def _kept_sync(root: Path, device: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).with_name("kept")), "sync"],
        env={**env, "KEPT_DATA_DIR": str(root), "KEPT_DEVICE": device},
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def _fetch(root: Path) -> float:
    started = time.perf_counter()
    _git("-C", str(root), "fetch", "--quiet", "origin")
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(HOME=str(folder / "home"), GIT_CONFIG_NOSYSTEM="1")
        os.environ.update(HOME=env["HOME"], GIT_CONFIG_NOSYSTEM="1")
        remote = folder / "remote.git"
        _git("init", "-q", "--bare", str(remote))
        laptop, desk = machine(folder / "laptop", "laptop"), machine(folder / "desk", "desk")
        for m in (laptop, desk):
            Repo(m.store.root).init(str(remote))
        for n in range(20):
            consolidate(laptop, n)
        for m in (laptop, desk, laptop):
            sync(m.store)

        idle = statistics.median(_kept_sync(laptop.store.root, "laptop", env) for _ in range(RUNS))
        fetch = statistics.median(_fetch(laptop.store.root) for _ in range(RUNS))
        print(f"kept sync, nothing to do      {idle:7.3f} s   (median of {RUNS})")
        print(f"git fetch alone (baseline)    {fetch:7.3f} s")
        print(f"  beside git fetch            {idle - fetch:+7.3f} s   (goal ≤ 0.5 s)")

        for n in range(100, 100 + SESSIONS):
            consolidate(desk, n)
        sync(desk.store)
        plain = folder / "plain"
        shutil.copytree(laptop.store.root, plain, symlinks=True)
        started = time.perf_counter()
        report = sync(laptop.store)
        merged = time.perf_counter() - started
        started = time.perf_counter()
        who = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        _git("-C", str(plain), *who, "pull", "-q", "--no-rebase", "--no-edit", "-X", "theirs")
        pulled = time.perf_counter() - started
        print(
            f"kept sync, {SESSIONS} sessions merged  {merged:7.3f} s   (goal ≤ 5 s; "
            f"{report.files} files, from {', '.join(sorted(report.devices))})"
        )
        print(f"git pull of the same (baseline) {pulled:5.3f} s")


if __name__ == "__main__":
    main()
