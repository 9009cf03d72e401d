"""Crash safety of the memory commit, against real processes.

1. `kill -9` lands at a random instant of a commit, many times over: MEMORY.md is always
   the old text or the new one, and the next start completes the commit with the history
   entry present exactly once, the segment marked consolidated once, and a version of the
   new MEMORY.md.
2. Two `kept consolidate` processes run at once against the fake provider: every session is
   saved by exactly one of them, once.

Only process exits, pipes and the fake's request events are waited on; the one sleep is the
random delay before a kill, which is the point of the test.
"""

from __future__ import annotations

import json
import os
import random
import re
import selectors
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

import memory
from catalog import CONSOLIDATION_HEAD, MODEL_CATALOG, Catalog, KeyStore
from catalog.config import CatalogConfig
from memory.consolidation.commit import commit
from memory.consolidation.reply import SavedMemory
from memory.consolidation.run import EDIT_ROUNDS, consolidate_pending
from memory.data.files import digest
from memory.data.history import STAMP_FORMAT
from memory.data.store import MemoryStore
from tests import crash_child as child
from tests.fakes.provider import FakeProvider, hang, tool_call
from tests.support import fake_keys, subprocess_env

REPO = Path(__file__).resolve().parents[2]
CHILD = REPO / "tests" / "crash_child.py"
OLD = child.OLD_MEMORY.encode("utf-8")
NEW = child.NEW_MEMORY.encode("utf-8")
# Sources of the versions after the commit: the two the child made up front, then the
# user's hand edit kept before it is replaced, then the consolidation itself.
VERSION_SOURCES = ["consolidation", "consolidation", "edited by you", "consolidation"]

KILLS = int(os.environ.get("KEPT_CRASH_KILLS", "40"))
CALIBRATION_RUNS = 3
# Kills are spread uniformly over [0, reach], reach starting at SPREAD x the measured commit
# duration. fsync times vary a lot from one commit to the next, so reach then follows what
# the kills find: shorter after a kill that came too late, a little longer after any other.
# That settles with about one kill in six landing after the commit, whatever the machine.
SPREAD = 1.3
SHRINK, GROW = 0.9, 1.02
WAIT = 60.0  # generous timeout for any one child on a slow machine


# --- helpers -------------------------------------------------------------------------------


def _spawn(data: Path) -> subprocess.Popen[bytes]:
    env = subprocess_env(KEPT_DATA_DIR=str(data))
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(data)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _read_until_ready(proc: subprocess.Popen[bytes]) -> tuple[str, bytes]:
    """The session id the child announced, and whatever it printed after READY (read in the
    same chunk); returns as soon as it printed READY."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + WAIT
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while b"READY\n" not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(timeout=left):
                proc.kill()
                pytest.fail(f"the child never said READY; it printed {seen!r}")
            chunk = os.read(fd, 4096)
            if not chunk:
                _, err = proc.communicate(timeout=WAIT)
                pytest.fail(
                    f"the child exited ({proc.returncode}) before READY:\n"
                    f"{seen.decode()}\n{err.decode()}"
                )
            seen += chunk
    match = re.search(rb"^SESSION (\S+)$", seen, re.MULTILINE)
    assert match, seen
    return match.group(1).decode(), seen.split(b"READY\n", 1)[1]


def _run_to_completion(data: Path) -> tuple[str, float]:
    proc = _spawn(data)
    session_id, early = _read_until_ready(proc)
    out, err = proc.communicate(timeout=WAIT)
    out = early + out
    assert proc.returncode == 0, err.decode()
    match = re.search(rb"^DONE (\S+)$", out, re.MULTILINE)
    assert match, out
    return session_id, float(match.group(1))


def _entries(store: MemoryStore) -> list[str]:
    return [e.body for e in store.all_history_entries()]


def _marks(store: MemoryStore, session_id: str) -> list[str]:
    journal = store.find_session(session_id)
    lines = journal.path.read_text(encoding="utf-8").splitlines()[1:]
    return [record["mark"] for record in map(json.loads, lines) if "mark" in record]


def _crash_stage(store: MemoryStore, session_id: str) -> str:
    """How far the killed commit got, read from what it left on disk."""
    journal = store.find_session(session_id)
    if not store.commit_path.exists():
        return "before" if journal.pending else "after"
    if store.memory_path.read_bytes() == OLD:
        return "during: intent written"
    if store.latest_version_digest() != digest(NEW):
        return "during: MEMORY.md replaced"
    if child.ENTRY not in _entries(store):
        return "during: version saved"
    if journal.pending:
        return "during: history appended"
    if journal.path.parent == store.sessions_dir:
        return "during: marked consolidated"
    return "during: journal moved to done/"


def _idle_catalog() -> Catalog:
    """A catalog without keys: the next start must not need a model when nothing is pending."""
    return Catalog(MODEL_CATALOG, CatalogConfig(), KeyStore(environ={}))


def _assert_committed(store: MemoryStore, session_id: str, before: list[str]) -> None:
    """The one and only final state a commit may end in."""
    assert store.memory_path.read_bytes() == NEW
    assert not store.commit_path.exists()

    entries = _entries(store)
    assert entries.count(child.ENTRY) == 1, "the history entry is missing or duplicated"
    assert Counter(entries) == Counter([*before, child.ENTRY]), (
        "an older history entry was lost or duplicated"
    )
    assert entries == [*before, child.ENTRY], "history entries are out of order"
    history = store.history_path.read_text(encoding="utf-8")
    assert history.startswith(child.PREAMBLE), "the heading of HISTORY.md was lost"
    assert (
        sum(len(e) + 2 for e in (e.text for e in store.history_entries()))
        <= store.settings.history_window_chars
    ), "HISTORY.md was not rolled into history/"
    assert [p.name for p in store.archive_files()] == [f"2025-{m:02d}.md" for m in range(1, 10)]

    journal = store.find_session(session_id)
    assert journal.warnings == []
    assert journal.path.parent == store.done_dir
    assert not (store.sessions_dir / journal.path.name).exists()
    assert journal.state == "consolidated" and journal.pending == []
    assert len(journal.consolidated) == 1
    assert _marks(store, session_id) == ["pending", "consolidated"]

    versions = store.versions()
    assert [v.source for v in versions] == VERSION_SOURCES
    assert [v.number for v in versions] == list(range(1, len(VERSION_SOURCES) + 1))
    assert versions[-2].path.read_bytes() == OLD, "the user's edit was not kept as a version"
    assert versions[-1].path.read_bytes() == NEW
    assert (versions[-1].session, versions[-1].model) == (session_id, child.MODEL)
    for version in versions:
        meta = json.loads(version.path.with_suffix(".json").read_text(encoding="utf-8"))
        assert meta["digest"] == digest(version.path.read_bytes()), version.path
    # Nothing a killed writer left behind is read as data: leftovers all have hidden
    # `.name.PID.tmp` names, and everything above was read with them in place.
    data_files = {*store.archive_files(), *(v.path for v in versions)}
    assert not any(p.name.endswith(".tmp") for p in data_files)


# --- 1. kill -9 at random instants of a commit ---------------------------------------------


async def test_kill_9_at_any_instant_of_a_commit_leaves_old_or_new_and_the_next_start_completes_it(
    tmp_path: Path,
) -> None:
    seed = int(os.environ.get("KEPT_CRASH_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    print(f"\nseed {seed} (KEPT_CRASH_SEED={seed} repeats the same delays)")
    started = time.monotonic()

    reference = MemoryStore(tmp_path / "reference", child.SETTINGS)
    child.build(reference.root)
    before = _entries(reference)
    assert len(before) == len(set(before)) > 100
    assert child.ENTRY not in before

    # Calibrate: a commit left alone, timed inside the child.
    durations = []
    for run in range(CALIBRATION_RUNS):
        store = MemoryStore(tmp_path / f"whole-{run}", child.SETTINGS)
        session_id, seconds = _run_to_completion(store.root)
        durations.append(seconds)
        assert memory.recover(store) is None  # nothing to complete
        _assert_committed(store, session_id, before)
    duration = statistics.median(durations)
    print(
        f"a whole commit takes {duration * 1000:.1f} ms "
        f"(runs: {', '.join(f'{d * 1000:.1f}' for d in durations)})"
    )

    stages: Counter[str] = Counter()
    writable = leftovers = 0
    reach = SPREAD * duration
    for kill in range(KILLS):
        store = MemoryStore(tmp_path / f"kill-{kill}", child.SETTINGS)
        proc = _spawn(store.root)
        session_id, early = _read_until_ready(proc)
        time.sleep(rng.uniform(0.0, reach))
        proc.send_signal(signal.SIGKILL)  # a no-op if the child already finished
        out, err = proc.communicate(timeout=WAIT)
        out = early + out
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()

        # The instant of the crash, before anything repairs it.
        stage = _crash_stage(store, session_id)
        stages[stage] += 1
        reach *= SHRINK if stage == "after" else GROW
        if proc.returncode == 0:
            assert b"DONE" in out and stage == "after"
        raw = store.memory_path.read_bytes()
        assert raw in (OLD, NEW), f"MEMORY.md is torn after a kill ({stage})"
        lost = Counter(before) - Counter(_entries(store))
        assert not lost, f"history entries vanished during the commit ({stage})"
        assert store.find_session(session_id).warnings == []
        began = store.commit_path.exists()
        if stage == "after":
            assert raw == NEW
        if stage == "before":
            assert raw == OLD and not any(store.versions_dir.glob("00000[34].*"))
            assert child.ENTRY not in _entries(store)

        # The next start.
        note = memory.recover(store)
        assert (note is not None) == began
        if stage == "before":
            assert store.memory_path.read_bytes() == OLD
            journal = store.find_session(session_id)
            assert journal.state == "pending" and len(journal.pending) == 1
            assert _marks(store, session_id) == ["pending"]
            saved = SavedMemory(child.HISTORY_ENTRY, child.NEW_MEMORY)
            assert commit(
                store,
                journal,
                journal.pending[0],
                saved,
                base=store.read_memory(),
                model=child.MODEL,
                when=child.WHEN,
            )
        _assert_committed(store, session_id, before)  # recover() alone completed it
        # The rest of a start: nothing left to consolidate, nothing changes.
        assert await consolidate_pending(store, _idle_catalog()) == []
        assert memory.recover(store) is None
        _assert_committed(store, session_id, before)
        # A kill between the move to done/ and the chmod is mended by recovery.
        journal = store.find_session(session_id)
        writable += (journal.path.stat().st_mode & 0o777) != 0o400
        assert journal.path.parent == store.done_dir
        leftovers += len(list(store.root.rglob("*.tmp")))

    elapsed = time.monotonic() - started
    during = sum(n for stage, n in stages.items() if stage.startswith("during"))
    print(
        f"{KILLS} kills in {elapsed:.1f} s: {stages['before']} before the commit began, "
        f"{during} during it, {stages['after']} after it finished "
        f"(delays drawn from 0 to {reach * 1000:.1f} ms at the end)"
    )
    for stage, n in sorted(stages.items()):
        print(f"  {n:3d}  {stage}")
    print(f"  .tmp files left by killed writers (and ignored): {leftovers}")
    print(f"  journals left writable in done/: {writable}")
    assert writable == 0
    # Otherwise the test proves nothing: a good share of the kills must land mid-commit.
    assert during >= max(3, KILLS // 4), stages


# --- 2. two processes consolidating at once ------------------------------------------------

HEAD = CONSOLIDATION_HEAD
INITIAL_MEMORY = "# About the user\n\n" + "".join(
    f"- Standing fact {n}: prefers metric units and short answers.\n" for n in range(8)
)
REPLIES = 12  # more than any interleaving of 3 sessions and 2 processes can use


WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliett",
    "kilo",
    "lima",
]


def _reply(k: int) -> tuple[str, str]:
    """A history entry and the one line a reply adds (grounded: "remember this" was said,
    and every session's user typed each of the WORDS)."""
    return (f"The user asked to remember this ({WORDS[k]}).", f"Remembers this ({WORDS[k]})")


def _edit(line: str) -> dict[str, object]:
    return {"op": "add", "line": line, "evidence": [{"message": 1, "quote": "remember this"}]}


def _config(fake: FakeProvider) -> str:
    gateways = "".join(
        f'[gateways.{name}]\nbase_url = "{fake.base_url(name)}"\n\n'
        for name in ("groq", "openai", "anthropic")
    )
    # A request the fake drops is retried at once rather than after a second; and the first
    # process's held request outlives the second process's start on the slowest machine,
    # without a hedge asking the next model meanwhile.
    return gateways + (
        "[transport]\nbackoff = 0.0\nmax_backoff = 0.0\nattempt_deadline = 300.0\n"
        "\n[memory]\nattempt_deadline = 300.0\nhedge = false\n"
    )


def test_two_processes_consolidating_at_once_save_every_session_exactly_once(
    tmp_path: Path, fake: FakeProvider
) -> None:
    data, config = tmp_path / "data", tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(_config(fake), encoding="utf-8")
    store = MemoryStore(data)
    store.ensure()
    store.memory_path.write_text(INITIAL_MEMORY, encoding="utf-8")
    stamps: dict[str, str] = {}
    for n in range(3):
        journal = store.new_session()
        when = f"2026-01-0{n + 1}T1{n}:00:00+00:00"
        said = f"Session {n}: remember this ({', '.join(WORDS)})."
        journal.append({"role": "user", "content": said, "time": when})
        journal.append({"role": "assistant", "content": "Noted.", "time": when})
        journal.mark_pending(close=True)
        stamps[journal.id] = datetime.fromisoformat(when).astimezone().strftime(STAMP_FORMAT)

    # Each process's first request hangs until both have sent one, so the two are surely
    # consolidating at the same time; then the dropped requests are retried.
    replies = [_reply(k) for k in range(REPLIES)]
    fake.script(
        HEAD,
        hang(),
        hang(),
        *(
            tool_call("save_memory", {"history_entry": entry, "edits": [_edit(line)]})
            for entry, line in replies
        ),
    )
    fake.default = tool_call("save_memory", {"history_entry": "Unexpected request.", "edits": []})

    env = subprocess_env(
        **fake_keys(),
        KEPT_DATA_DIR=str(data),
        KEPT_CONFIG_DIR=str(config),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    command = [sys.executable, "-m", "app.cli.main", "consolidate"]
    procs = [
        subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    try:
        both = fake.wait_for_requests(2, timeout=120)
        fake.release()
        outputs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (out, err) in zip(procs, outputs, strict=True):
        print(f"--- exit {p.returncode}\n{out}{err}")
    requests = [r for r in fake.requests if not r.judging]  # second opinions aside
    print(f"the fake saw {len(requests)} requests for {len(stamps)} sessions")
    assert both, "the two processes never had a request in flight at the same time"

    # Each process exits 0 when it saved all it tried, 1 when the other was saving one.
    saved_by: Counter[str] = Counter()
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert "Traceback" not in err and "warning:" not in err, err
        pending = re.findall(r"^Session (\S+): still pending, nothing lost\. (.*)$", out, re.M)
        assert all(
            reason.startswith("another Kept process is saving this session")
            for _, reason in pending
        ), out
        assert p.returncode == (1 if pending else 0), out
        saved_by.update(re.findall(r"^Session (\S+): saved by ", out, re.M))
    assert saved_by == Counter(stamps.keys()), "a session was saved twice, or by nobody"

    # Every session consolidated exactly once.
    assert not store.commit_path.exists()
    assert store.open_sessions() == []
    for session_id in stamps:
        journal = store.find_session(session_id)
        assert journal.path.parent == store.done_dir and journal.warnings == []
        assert journal.state == "consolidated" and len(journal.consolidated) == 1
        assert _marks(store, session_id) == ["pending", "consolidated"]

    # One history entry per session, each from a reply that was really saved.
    entries = store.all_history_entries()
    assert sorted(e.stamp for e in entries) == sorted(stamps.values())
    texts = {entry: k for k, (entry, _) in enumerate(replies)}
    used = [texts[e.body.split("] ", 1)[1]] for e in entries]
    assert len(set(used)) == len(used)

    # MEMORY.md is whole, and it is the last version; each commit kept its own version,
    # written from the same reply as its session's history entry.
    versions = store.versions()
    assert [v.source for v in versions[1:]] == ["consolidation"] * len(stamps)
    assert versions[0].source != "consolidation"  # the user's text, kept before the first save
    assert versions[0].path.read_text(encoding="utf-8") == INITIAL_MEMORY
    assert store.memory_path.read_bytes() == versions[-1].path.read_bytes()
    by_session = {v.session: v.path.read_text(encoding="utf-8") for v in versions[1:]}
    assert by_session.keys() == stamps.keys()
    for e in entries:
        session_id = next(s for s, stamp in stamps.items() if stamp == e.stamp)
        line = replies[texts[e.body.split("] ", 1)[1]]][1]
        assert by_session[session_id].startswith(INITIAL_MEMORY)
        assert f"- {line}\n" in by_session[session_id]

    # Requests: two dropped, one per session, and at least one more because the process that
    # committed second had read MEMORY.md before the other's commit (the edit-conflict path).
    assert all(r.model == HEAD for r in requests)
    assert len(stamps) + 3 <= len(requests) <= 2 + len(stamps) * EDIT_ROUNDS
    log = store.read_log()
    assert len(log) == len(store.log_path.read_text(encoding="utf-8").splitlines())
    outcomes = Counter(record["outcome"] for record in log if not record.get("purpose"))
    assert outcomes == {"retried": 2, "ok": len(requests) - 2}
