"""Every TUI test also checks that the running app never waits on a lock of the data folder
or writes a health book on the event-loop thread (a lock can wait for another process, and a
loop that waits draws nothing)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from catalog.health import HealthBook
from memory.data import files


def _the_app_did_it(frame: FrameType | None) -> str | None:
    """Where in app/ the call came from, when the running app made it: an app/ frame with a
    Textual frame (a message handler, a worker) beneath it. A test building the app, or
    seeding the data folder from its own coroutine, is neither."""
    where: str | None = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if where is None and (module == "app" or module.startswith("app.")):
            where = f"{module}:{frame.f_lineno} ({frame.f_code.co_name})"
        elif where is not None and module.startswith("textual."):
            return where
        frame = frame.f_back
    return None


@pytest.fixture(autouse=True)
def the_loop_never_waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each lock that waits, or health-book write, the running app made on the event-loop
    thread; the test fails at its end if there was one. Nothing is raised on the spot: the
    test runs as the user's app would, so the check changes no behaviour it watches."""
    seen: list[str] = []
    check = files._check_off_loop
    write = HealthBook._write

    def noted(what: str) -> None:
        if asyncio._get_running_loop() is not None:  # this thread runs a loop
            where = _the_app_did_it(sys._getframe(2))
            if where is not None:
                seen.append(f"{what} from {where}")

    def lock_checked(path: Path, blocking: bool) -> None:
        if blocking:  # a lock tried without waiting returns at once
            noted(f"the lock {path.name}")
        check(path, blocking)

    def health_written(self: HealthBook, *args: object, **kwargs: object) -> None:
        noted("a health book's write")
        write(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "_check_off_loop", lock_checked)
    monkeypatch.setattr(HealthBook, "_write", health_written)
    yield seen
    if seen:
        pytest.fail("the app blocked its event loop on: " + "; ".join(dict.fromkeys(seen)))
