"""The health book on the hot path: a walk never takes the book's lock nor writes its file
on the event loop, reads what it observed at once, and leaves it in the file when it ends."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import filelock
import pytest

from catalog import Attempt, Outcome, complete
from catalog.health import HealthBook, State
from tests.factories import MESSAGES, PAIR, Clock
from tests.fakes.provider import FakeProvider, http_error, text
from tests.support import FAST_POLICY, fake_catalog

HOLDER = (
    "import sys\nfrom filelock import FileLock\n"
    "lock = FileLock(sys.argv[1])\nlock.acquire()\nprint('held', flush=True)\n"
    "sys.stdin.read()\n"
)


class Spy(HealthBook):
    """A book that notes the thread of every write."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writers: set[int] = set()

    def _write(self, *args: Any, **kwargs: Any) -> None:
        self.writers.add(threading.get_ident())
        super()._write(*args, **kwargs)


async def test_a_walk_never_locks_nor_writes_the_book_on_the_event_loop(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lockers: set[int] = set()
    acquire = filelock.FileLock.acquire

    def noted(self: filelock.FileLock, *args: Any, **kwargs: Any) -> Any:
        lockers.add(threading.get_ident())
        return acquire(self, *args, **kwargs)

    monkeypatch.setattr(filelock.FileLock, "acquire", noted)
    clock = Clock()
    path = tmp_path / "health.json"
    book = Spy(path, clock=clock)
    catalog = fake_catalog(fake, entries=PAIR)

    loop = threading.get_ident()
    fake.set_default("primary", http_error(500))
    result = await complete(catalog, "primary", MESSAGES, policy=FAST_POLICY, health=book)
    assert result.model == "backup"
    # Written when the walk returned: another process sees the cooldown at once.
    assert HealthBook(path, clock=clock).get("primary").state is State.COOLING
    # The cooldown ends: the next walk claims the probe (a write) before it asks.
    clock.now = book.get("primary").until + 1
    fake.reset()
    fake.set_default("primary", text("back"))
    result = await complete(catalog, "primary", MESSAGES, policy=FAST_POLICY, health=book)
    assert result.model == "primary"
    assert HealthBook(path, clock=clock).get("primary").state is State.HEALTHY
    assert book.writers and lockers
    assert loop not in book.writers and loop not in lockers


async def test_an_observation_never_waits_for_the_lock_and_is_read_at_once(tmp_path: Path) -> None:
    """Another process holds the book's lock: an attempt observed on the loop returns at
    once, this book already reads it, and the file has it once the lock is free."""
    path = tmp_path / "health.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / ".health.json.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    # Lets the lock go if an observation waits for it: the test then fails, never hangs.
    watchdog = threading.Timer(120.0, holder.kill)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        book = HealthBook(path)
        watchdog.start()
        book.observe(Attempt("m", "openai", Outcome.OK, latency=0.25))  # on the event loop
        assert holder.poll() is None, "the observation waited for the lock on the event loop"
        assert book.get("m").answers == 1
        assert not path.exists()  # not written yet: the lock is still held
    finally:
        watchdog.cancel()
        holder.kill()
        holder.wait(timeout=120)
    book.flush()
    again = HealthBook(path).get("m")
    assert again.answers == 1 and book.get("m").answers == 1  # in the file, counted once
