"""A year of history: every verb and view on an empty data folder and, in the same run, on
one with 10,000 imported conversations (a generated ChatGPT export, through `kept import`),
all pending, and 5,000 versions of MEMORY.md. KEPT_BENCH_SESSIONS and KEPT_BENCH_VERSIONS
set the sizes.

Versions are written as files, each a small change of the one before (most by
consolidations, every seventh by you), as a year of /new and /remember leaves them: 5,000
real consolidations would take hours. Each CLI verb is a new process, median of 3 after a
first run (which builds the derived caches, index.pending.json and index.blame/, and is
shown apart); each view is timed in the app, headless, from the key to what it draws, with
the longest time the event loop was held meanwhile. A timed key is sent as a terminal sends
it (`send_key`): Pilot.press also waits until the whole process is idle, up to a second
twice, and an import in a background thread keeps it busy that long."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from tests.bench.bench_search import WORDS

ROOT = Path(__file__).resolve().parents[2]
VERBS = ("log", "doctor", "consolidate --dry-run", "memory versions", "memory blame")


def export(path: Path, count: int) -> None:
    """A ChatGPT export of `count` conversations of 10 messages, a conversation at a time."""
    rng = random.Random(3)
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for n in range(count):
            at = 1_700_000_000 + n * 3000  # one every 50 minutes, over most of a year
            nodes: dict[str, Any] = {
                "root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}
            }
            for i in range(10):
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80)))
                nodes[f"m{i}"] = {
                    "id": f"m{i}",
                    "parent": "root" if i == 0 else f"m{i - 1}",
                    "children": [f"m{i + 1}"] if i < 9 else [],
                    "message": {
                        "id": f"m{i}",
                        "author": {"role": "user" if i % 2 == 0 else "assistant"},
                        "create_time": at + i,
                        "content": {"content_type": "text", "parts": [words]},
                    },
                }
            conversation = {
                "title": f"Chat {n}",
                "create_time": at,
                "conversation_id": f"c-{n}",
                "mapping": nodes,
                "current_node": "m9",
            }
            f.write(("," if n else "") + json.dumps(conversation))
        f.write("]")


def versions(root: Path, count: int) -> None:
    """`count` versions of MEMORY.md, each a line added, replaced or dropped, within the
    16,000-character budget; MEMORY.md is the last."""
    folder = root / "versions"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    rng = random.Random(5)
    lines = ["# About me", ""]
    raw = b""
    for n in range(1, count + 1):
        roll = rng.random()
        if roll < 0.6 or len(lines) < 22:
            lines.append("- " + " ".join(rng.choice(WORDS) for _ in range(8)))
        elif roll < 0.8:
            lines[rng.randrange(2, len(lines))] = "- " + " ".join(
                rng.choice(WORDS) for _ in range(8)
            )
        else:
            del lines[rng.randrange(2, len(lines))]
        while sum(len(line) + 1 for line in lines) > 15_000:
            del lines[2]
        raw = ("\n".join(lines) + "\n").encode()
        (folder / f"{n:06d}.md").write_bytes(raw)
        mine = n % 7 == 0
        session = f"2024{1 + n // 420 % 12:02d}{1 + n % 28:02d}-100000-{n:06x}"
        meta = {
            "time": f"2024-{1 + n // 420 % 12:02d}-{1 + n % 28:02d}T10:00:00+00:00",
            "source": "remembered" if mine else "consolidation",
            "session": None if mine else session,
            "model": None if mine else "llama-3.3-70b-versatile",
            "digest": hashlib.sha256(raw).hexdigest(),
            "entry": f"Session {n} was about {rng.choice(WORDS)}.",
        }
        (folder / f"{n:06d}.json").write_text(json.dumps(meta))
    (root / "MEMORY.md").write_bytes(raw)


def env_for(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, "KEPT_DATA_DIR": str(data), "KEPT_CONFIG_DIR": str(data.parent / "config")}


def kept(data: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "app.cli.main", *args],
        cwd=ROOT,
        env=env_for(data),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )
    return time.perf_counter() - started


def build(data: Path, sessions: int, count: int) -> str:
    conversations = data.parent / "conversations.json"
    export(conversations, sessions)
    size = conversations.stat().st_size / 2**20
    took = kept(data, "import", "--from", "chatgpt", str(conversations))
    conversations.unlink()
    versions(data, count)
    return f"{sessions:,} conversations ({size:.0f} MB export) imported in {took:.1f} s"


@contextlib.contextmanager
def data_env(data: Path) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("KEPT_DATA_DIR", "KEPT_CONFIG_DIR")}
    os.environ.update({k: v for k, v in env_for(data).items() if k in saved})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def store_figures(data: Path) -> dict[str, float]:
    """/remember and undo, as the store does them (median of 5), and blame."""
    from memory import MemoryStore
    from memory.recall.provenance import blame

    store = MemoryStore(data)
    remember, undo = [], []
    for n in range(5):
        started = time.perf_counter()
        number = store.remember(f"likes the number {n}")
        remember.append(time.perf_counter() - started)
        started = time.perf_counter()
        store.undo(number)
        undo.append(time.perf_counter() - started)
    started = time.perf_counter()
    blame(store)
    return {
        "/remember": statistics.median(remember),
        "undo": statistics.median(undo),
        "blame, in the process": time.perf_counter() - started,
    }


class _Stalls:
    """The longest the event loop went without running a 5 ms sleeper."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - before - 0.005)

    def start(self) -> None:
        self.worst = 0.0
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> float:
        if self._task is not None:
            self._task.cancel()
        return self.worst


async def _until(pilot: Any, condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 300
    while not condition():
        assert time.monotonic() < deadline, f"the benchmark waited too long for {what}"
        await pilot.pause(0.005)


def view_figures(data: Path) -> dict[str, tuple[float, float]]:
    """Each view: seconds from its key to what it draws, and the longest loop stall."""
    from textual.widgets import OptionList

    from app.main import KeptApp
    from app.screens.log import LogScreen
    from app.screens.memory import VERSIONS_SHOWN, MemoryScreen
    from app.widgets.where_from import WhereFrom
    from catalog import Catalog, KeyStore
    from catalog.config import CatalogConfig
    from catalog.models import MODEL_CATALOG
    from memory import MemoryStore

    class Quiet(KeptApp):
        """No key, and no consolidation at start-up: the views see the folder as built."""

        def _first_frame(self) -> None:
            self.jobs.start = lambda: None  # type: ignore[method-assign]
            super()._first_frame()

    figures: dict[str, tuple[float, float]] = {}

    async def timed(name: str, pilot: Any, act: Awaitable[None], done: Callable[[], bool]) -> None:
        stalls = _Stalls()
        stalls.start()
        started = time.perf_counter()
        await act
        await _until(pilot, done, name)
        figures[name] = (time.perf_counter() - started, stalls.stop())

    async def scenario() -> None:
        catalog = Catalog(MODEL_CATALOG, config=CatalogConfig(), keys=KeyStore(environ={}))
        app = Quiet(store=MemoryStore(data), catalog=catalog)
        async with app.run_test(size=(100, 32)) as pilot:
            await _until(pilot, lambda: getattr(app, "ready_at", None) is not None, "start")
            await pilot.pause()
            count = len(MemoryStore(data).version_numbers())

            def versions_listed() -> bool:
                screen = app.screen
                if not isinstance(screen, MemoryScreen) or not screen.is_mounted:
                    return False
                rows = min(count, VERSIONS_SHOWN) + (count > VERSIONS_SHOWN)  # and "older"
                newest = str(count)  # the newest version on top
                return any(
                    o.option_count == rows and (not rows or o.get_option_at_index(0).id == newest)
                    for o in screen.query("#versions").results(OptionList)
                )

            await timed("/memory, open", pilot, _call(app.action_memory), versions_listed)
            screen = app.screen
            assert isinstance(screen, MemoryScreen)
            if count > 1:
                await pilot.press("4")
                screen.query_one("#versions", OptionList).focus()
                await pilot.pause()
                seen = screen.diff_text
                await timed(
                    "versions, next highlight",
                    pilot,
                    send_key(app, "down"),
                    lambda: screen.diff_text != seen,
                )
            MemoryStore(data).remember("likes a year of history")
            count = len(MemoryStore(data).version_numbers())
            await timed("/memory, reload", pilot, _call(screen.reload), versions_listed)
            await timed(
                "blame (b)",
                pilot,
                send_key(app, "b"),
                lambda: bool(screen.query_one(WhereFrom).lines),
            )
            await pilot.press("escape")
            await pilot.pause()

            def log_drawn() -> bool:
                if not isinstance(app.screen, LogScreen) or not app.screen.is_mounted:
                    return False
                return any(str(s.render()) != "" for s in app.screen.query("#pending"))

            await timed("/log", pilot, _call(app.action_log), log_drawn)

    asyncio.run(scenario())
    return figures


async def _call(action: Callable[[], object]) -> None:
    action()


async def send_key(app: Any, key: str) -> None:
    """`key` as the terminal sends it, without waiting for anything."""
    from textual import events

    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app.post_message(event)


def first_screen(data: Path) -> float:
    """Start-up to the first screen: bench_app's measure when it has one, else ours."""
    try:
        from tests.bench import bench_app
    except ImportError:
        bench_app = None  # type: ignore[assignment]
    measured = getattr(bench_app, "first_screen_seconds", None)
    if measured is not None:
        return statistics.median(float(measured(data)) for _ in range(3))
    child = (
        "import time\nstarted = time.perf_counter()\nfrom app.main import KeptApp\n"
        "class Bench(KeptApp):\n    def _first_frame(self):\n        super()._first_frame()\n"
        "        print(time.perf_counter() - started)\n        self.exit()\n"
        "Bench().run(headless=True)\n"
    )
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", child],
            cwd=ROOT,
            env=env_for(data),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        runs.append(float(out.stdout.split()[-1]))
    return statistics.median(runs)


def measure(
    data: Path,
) -> tuple[dict[str, float], dict[str, float], dict[str, tuple[float, float]]]:
    cli_first = {verb: kept(data, *verb.split()) for verb in VERBS}
    cli = {verb: statistics.median(kept(data, *verb.split()) for _ in range(3)) for verb in VERBS}
    cli_first["first screen"] = first_screen(data)
    with data_env(data):
        views = view_figures(data)
        stored = store_figures(data)
    return {**cli, **stored}, cli_first, views


def main() -> None:
    sessions = int(os.environ.get("KEPT_BENCH_SESSIONS", "10000"))
    count = int(os.environ.get("KEPT_BENCH_VERSIONS", "5000"))
    with tempfile.TemporaryDirectory() as tmp:
        empty, year = Path(tmp) / "empty" / "data", Path(tmp) / "year" / "data"
        alone = Path(tmp) / "alone" / "data"
        for folder in (empty, year, alone):
            folder.mkdir(parents=True)
        print(build(year, sessions, count), flush=True)
        # The year's MEMORY.md (at its budget) with no history: what drawing it costs.
        shutil.copy(year / "MEMORY.md", alone / "MEMORY.md")
        base, base_first, base_views = measure(empty)
        full, full_first, full_views = measure(year)
        with data_env(alone):
            alone_views = view_figures(alone)
        label = f"{sessions:,} sessions / {count:,} versions"
        print(f"{'':30} {'empty':>8} {label:>34}")
        for verb in VERBS:
            print(
                f"kept {verb:25} {base[verb]:7.2f}s {full[verb]:7.2f}s "
                f"(its first run {full_first[verb]:.2f} s)"
            )
        print(
            f"{'first screen':30} {base_first['first screen']:7.2f}s "
            f"{full_first['first screen']:7.2f}s"
        )
        for name in ("/remember", "undo", "blame, in the process"):
            print(f"{name:30} {base[name]:7.3f}s {full[name]:7.3f}s")
        print(f"{'':30} {'empty':>8} {'MEMORY.md alone':>16} {'a year':>8}  loop held (ms)")
        nothing = (float("nan"), float("nan"))
        for name, (seconds, stall) in full_views.items():
            empty_seconds, empty_stall = base_views.get(name, nothing)
            alone_seconds, alone_stall = alone_views.get(name, nothing)
            print(
                f"{name:30} {empty_seconds:7.3f}s {alone_seconds:15.3f}s {seconds:7.3f}s  "
                f"{empty_stall * 1000:.0f} / {alone_stall * 1000:.0f} / {stall * 1000:.0f}"
            )
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
