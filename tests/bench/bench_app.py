"""The terminal app: start-up, a 2,000-message session, streaming throughput, memory.

Every figure is printed beside its goal and, where one exists, a baseline from the same
run (a bare Textual app).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).parents[2].parent
RUNS = 7

# A child process: build the app, print seconds since the interpreter began, the CPU
# seconds it used (steadier than the clock on a busy machine) and the RSS once the first
# screen is drawn, then leave.
CHILD = r"""
import time
started = time.perf_counter()
import os, sys
kind = sys.argv[1]

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

def report():
    seconds, cpu = time.perf_counter() - started, time.process_time()
    print(seconds, cpu, rss_mib(), "litellm" in sys.modules)

if kind == "bare":
    from textual.app import App
    from textual.widgets import Footer, Static

    class Bench(App):
        def compose(self):
            yield Static("Hello")
            yield Footer()

        def on_mount(self):
            self.call_after_refresh(self.done)

        def done(self):
            report()
            self.exit()
else:
    from app.main import KeptApp

    class Bench(KeptApp):
        def _first_frame(self):
            super()._first_frame()
            report()
            self.exit()

Bench().run(headless=True)
"""


def _child(kind: str, env: Mapping[str, str]) -> tuple[float, float, float, bool]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(env),
        timeout=120,
        check=True,
    )
    seconds, cpu, rss, litellm = out.stdout.split()[-4:]
    return float(seconds), float(cpu), float(rss), litellm == "True"


def first_screen_seconds(
    data_dir: Path, env: Mapping[str, str] | None = None, *, kind: str = "kept"
) -> float:
    """Seconds from a new interpreter's start to Kept's first screen (kind "bare": a bare
    Textual app's) on the data folder `data_dir`, its config beside it unless `env` says."""
    return _measure(data_dir, env, kind)[0]


def _measure(
    data_dir: Path, env: Mapping[str, str] | None, kind: str
) -> tuple[float, float, float, bool]:
    child = {
        **os.environ,
        "KEPT_CONFIG_DIR": str(data_dir.parent / f"{data_dir.name}-config"),
        "OPENAI_API_KEY": "sk-bench",
        **(env or {}),
        "KEPT_DATA_DIR": str(data_dir),
    }
    return _child(kind, child)


def pending_sessions(data_dir: Path, count: int, size: int = 20_000) -> None:
    """`count` closed sessions of about `size` bytes each, waiting to be saved to memory,
    written as Kept writes them (what a long time without a key leaves)."""
    import json

    from memory import MemoryStore

    store = MemoryStore(data_dir).ensure()
    words = ("hello there, " * (size // 13 // 10 + 1))[: size // 10]
    for number in range(count):
        stamp = time.strftime("%H%M%S", time.gmtime(number % 86400))
        session_id = f"20260101-{stamp}-{number:06x}"
        lines: list[dict[str, object]] = [
            {"kept": "session", "version": 1, "id": session_id, "created": "", "model": None}
        ]
        lines += [
            {"role": "user" if i % 2 == 0 else "assistant", "content": words, "time": ""}
            for i in range(10)
        ]
        lines.append({"mark": "pending", "start": 0, "end": 10, "closed": True, "time": ""})
        (store.sessions_dir / f"{session_id}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines)
        )


def startup(tmp: Path, many: int = 10_000) -> None:
    import compileall

    # Kept's modules compiled, as an install has them (Textual's are): with
    # PYTHONDONTWRITEBYTECODE set, each start would compile them again.
    for package in ("app", "catalog", "memory", "themes"):
        compileall.compile_dir(ROOT / package, quiet=1)
    empty, full = tmp / "empty", tmp / "many"
    pending_sessions(full, many)
    first_screen_seconds(full)  # the first look at a folder marks its open journals once
    bare, kept, crowded = [], [], []
    for _ in range(RUNS):  # interleaved, so all see the same machine
        bare.append(_measure(empty, None, "bare"))
        kept.append(_measure(empty, None, "kept"))
        crowded.append(_measure(full, None, "kept"))
    b = statistics.median(s for s, _, _, _ in bare)
    k = statistics.median(s for s, _, _, _ in kept)
    c = statistics.median(s for s, _, _, _ in crowded)
    cpu_b = statistics.median(cpu for _, cpu, _, _ in bare)
    cpu_k = statistics.median(cpu for _, cpu, _, _ in kept)
    print(
        f"start-up to first screen (median of {RUNS}): bare Textual app {b * 1000:.0f} ms, "
        f"Kept {k * 1000:.0f} ms: x{k / b:.2f} (goal ≤ x1.15); CPU time {cpu_b * 1000:.0f} "
        f"ms, {cpu_k * 1000:.0f} ms: x{cpu_k / cpu_b:.2f}"
    )
    print(
        f"  with {many:,} pending sessions of 20 KB: {c * 1000:.0f} ms: x{c / k:.2f} the "
        "empty folder (goal ≤ x1.1)"
    )
    rss_b = statistics.median(r for _, _, r, _ in bare)
    rss_k = statistics.median(r for _, _, r, _ in kept)
    print(
        f"resident memory at the first screen: bare {rss_b:.0f} MiB, Kept {rss_k:.0f} MiB "
        f"(goal ≤ 80 MiB); litellm imported: {any(x for *_, x in kept)}"
    )


def big_session(tmp: Path) -> None:
    from memory import MemoryStore
    from tests.support import make_app

    os.environ["KEPT_DATA_DIR"] = str(tmp / "big")
    os.environ["KEPT_CONFIG_DIR"] = str(tmp / "big-config")
    os.environ["OPENAI_API_KEY"] = "sk-bench"
    store = MemoryStore().ensure()
    journal = store.new_session("gpt-4.1-mini")
    for i in range(2000):
        journal.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "model": "gpt-4.1-mini",
                "content": f"Message {i} with some **Markdown** and `code`.\n\n- a\n- b",
            }
        )

    async def open_once() -> float:
        started = time.perf_counter()
        app = make_app(None, env={"OPENAI_API_KEY": "sk-bench"})
        async with app.run_test(size=(100, 40)) as pilot:
            # Found after the first frame: timed until it is drawn.
            while app.ready_at is None or not app.session.is_found:
                await pilot.pause()
            await pilot.pause()
            return time.perf_counter() - started

    timings = [asyncio.run(open_once()) for _ in range(5)]
    print(
        f"open a 2,000-message session until it is drawn (median of 5): "
        f"{statistics.median(timings) * 1000:.0f} ms (goal ≤ 500 ms)"
    )


def streaming() -> None:
    # A new chat in a data folder of its own: not the user's, nor one a bench left behind.
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KEPT_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["KEPT_CONFIG_DIR"] = str(Path(tmp) / "config")
        os.environ["OPENAI_API_KEY"] = "sk-bench"
        _streaming()


def _streaming() -> None:
    from dataclasses import replace

    from textual import events

    from app.screens.chat import ChatScreen
    from app.widgets.composer import Composer
    from catalog import complete
    from catalog.llm import litellm
    from tests.fakes.provider import FakeProvider, text
    from tests.support import FAST_POLICY, fake_catalog, make_app

    litellm()  # loaded before the clock starts, as it is by the time a user has typed
    chunks = 20_000
    reply = ("word " * 49 + "end.\n\n") * (chunks // 50)
    tokens = litellm().token_counter(model="gpt-4o", text=reply)
    policy = replace(FAST_POLICY, attempt_deadline=600.0)

    async def transport_only(fake: FakeProvider) -> float:
        started = time.perf_counter()
        result = await complete(
            fake_catalog(fake),
            "gpt-4.1-mini",
            [{"role": "user", "content": "go"}],
            stream=True,
            policy=policy,
            on_delta=lambda piece: None,
        )
        assert result.ok, result.reason
        return time.perf_counter() - started

    async def in_the_app(fake: FakeProvider) -> tuple[float, list[float], int]:
        app = make_app(fake)
        app.policy = policy
        async with app.run_test(size=(100, 40)) as pilot:
            composer = app.screen.query_one(Composer)
            await pilot.press(*"go", "enter")
            screen = app.screen
            assert isinstance(screen, ChatScreen)
            latencies: list[float] = []

            async def typist() -> None:
                # A key event straight into the composer's queue, as a terminal delivers it;
                # the time until the composer shows the character is what a user feels.
                while True:
                    await asyncio.sleep(0.1)
                    before = len(composer.text)
                    pressed = time.perf_counter()
                    composer.post_message(events.Key("x", "x"))
                    while len(composer.text) == before:
                        await asyncio.sleep(0.001)
                    latencies.append(time.perf_counter() - pressed)

            started = time.perf_counter()
            typing = asyncio.create_task(typist())
            await screen.reply_finished()
            elapsed = time.perf_counter() - started
            typing.cancel()
            return elapsed, latencies, len(app.session.messages[-1]["content"] or "")

    with FakeProvider() as fake:
        fake.default = text(reply, chunks=chunks)
        alone = asyncio.run(transport_only(fake))
        elapsed, latencies, size = asyncio.run(in_the_app(fake))
    assert size == len(reply), f"the reply did not arrive whole ({size} characters)"
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p95 = latencies[int(len(latencies) * 0.95)] * 1000
    print(
        f"stream a {tokens:,}-token reply in {chunks:,} chunks: transport alone (baseline) "
        f"{alone:.2f} s = {tokens / alone:,.0f} tokens/s; in the app {elapsed:.2f} s = "
        f"{tokens / elapsed:,.0f} tokens/s (goal ≥ 2,000)"
    )
    print(
        f"  a key pressed every 100 ms meanwhile ({len(latencies)} presses): median "
        f"{p50:.1f} ms, p95 {p95:.1f} ms, worst {latencies[-1] * 1000:.1f} ms "
        f"(goal ≤ 50 ms)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        startup(Path(tmp))
        big_session(Path(tmp))
    streaming()
