"""A failing model costs seconds once, then nothing: `kept consolidate` end to end.

Each scenario runs real `kept consolidate` processes (the shipped retry policy and
deadlines, the CLI's own config.toml; timed once litellm is imported) on a 60-message
session against the loopback fake provider, in its own data dir. The baseline is the same
chain healthy, in the same run: the first sessions of each scenario, whose answers also
teach Kept the primary's latency. Then the primary fails, for a first session and for the
next three (their median). A row "never answered before" skips the healthy sessions:
nothing is known of the primary when it hangs.

Then hedging on a primary with a slow tail, and a chat message through
`memory.chat.turn.answer` (streamed, as the app does) with a dead primary: the first and
the second message, beside a healthy one.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.bench_consolidation import SAVE, messages
from tests.fakes.provider import FakeProvider, Step, hang, http_error, text, tool_call
from tests.support import FAKE_GATEWAYS, fake_catalog, fake_keys

ROOT = Path(__file__).parents[2].parent
PRIMARY = "llama-3.3-70b-versatile"
HEALTHY_SESSIONS = 3  # enough answers for the deadline to follow the primary's latency
GOALS = {
    ("500", "first"): 3.5,
    ("500", "next"): 1.0,
    ("hang", "first"): 12.0,
    ("hang", "next"): 1.0,
}


def _environment(fake: FakeProvider, folder: Path, hedge: bool) -> dict[str, str]:
    config = folder / "config"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        "".join(f'[gateways.{g}]\nbase_url = "{fake.base_url(g)}"\n\n' for g in FAKE_GATEWAYS)
        + f"[memory]\nhedge = {'true' if hedge else 'false'}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(fake_keys(), KEPT_DATA_DIR=str(folder / "data"), KEPT_CONFIG_DIR=str(config))
    return env


def _session(env: dict[str, str]) -> None:
    from memory import MemoryStore
    from tests.support import pending_session

    store = MemoryStore(Path(env["KEPT_DATA_DIR"])).ensure()
    pending_session(store, messages())


# `kept consolidate` in a new process, timed from its start once litellm is imported: the
# import (several seconds on a busy machine, see bench_cli) is the same in every run and
# only adds noise to the difference measured here.
CHILD = """
import sys, time
from catalog.llm import litellm
litellm()
from app.cli.main import main
started = time.perf_counter()
code = main(["consolidate"])
print("elapsed", time.perf_counter() - started, file=sys.stderr)
sys.exit(code)
"""


def _consolidate(env: dict[str, str]) -> float:
    """Seconds for one `kept consolidate` of one pending session."""
    _session(env)
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return float(done.stderr.split("elapsed")[-1])


def _scenario(
    fake: FakeProvider, fault: Step, healthy: int, hedge: bool
) -> tuple[float | None, float, float]:
    """(healthy median, first failing session, median of the next three), in seconds."""
    fake.reset()
    fake.default = tool_call("save_memory", SAVE)
    with tempfile.TemporaryDirectory() as tmp:
        env = _environment(fake, Path(tmp), hedge)
        times = [_consolidate(env) for _ in range(healthy)]
        fake.set_default(PRIMARY, fault)
        first = _consolidate(env)
        following = statistics.median(_consolidate(env) for _ in range(3))
        fake.release()  # a hanging request still open is let go
    return (statistics.median(times) if times else None), first, following


def _chat(fake: FakeProvider, fault: Step | None) -> list[float]:
    """Seconds for three chat messages in a row, the primary failing with `fault`."""
    from memory import LiveSession, MemoryStore
    from memory.chat.turn import answer

    fake.reset()
    fake.default = text("A short answer from the fake provider.")
    if fault is not None:
        fake.set_default("gpt-4.1-mini", fault)
    catalog = fake_catalog(fake)
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp)).ensure()
        session = LiveSession.resume_or_start(store, "gpt-4.1-mini")
        times = []
        for i in range(3):
            session.append({"role": "user", "content": f"Message {i}"})
            started = time.perf_counter()
            turn = asyncio.run(answer(session, catalog, "gpt-4.1-mini"))
            times.append(time.perf_counter() - started)
            assert turn.ok, turn.reason
        session.release()
        fake.release()
    return times


def _tail(fake: FakeProvider, hedge: bool, sessions: int = 30) -> tuple[float, int, float]:
    """A primary that is slow one session in ten: (seconds, requests, dollars) in all."""
    import json

    from memory import MemorySettings, MemoryStore, consolidate
    from tests.fakes.provider import trickle
    from tests.support import pending_session

    fake.reset()
    fake.default = tool_call("save_memory", SAVE)
    slow = trickle(2.0, 1, content=json.dumps(SAVE))  # a valid answer, in 2 s
    fake.script(
        PRIMARY,
        *[slow if i % 10 == 9 else tool_call("save_memory", SAVE) for i in range(sessions)],
    )
    catalog = fake_catalog(fake)
    seconds = cost = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp), MemorySettings(hedge=hedge)).ensure()
        for _ in range(sessions):
            journal = pending_session(store, messages())
            started = time.perf_counter()
            result = asyncio.run(consolidate(store, catalog, journal, journal.pending[0]))
            seconds += time.perf_counter() - started
            cost += result.cost
            assert result.saved, result.reason
    fake.release()
    return seconds, fake.count(), cost


def main() -> None:
    print(
        "`kept consolidate`, a 60-message session, the shipped policy and deadlines; "
        "extra = seconds over the healthy chain in the same data dir"
    )
    print(
        f"{'primary':32} {'healthy s':>9} {'first s':>8} {'extra':>7} {'goal':>5}  "
        f"{'next s':>7} {'extra':>7} {'goal':>5}"
    )
    with FakeProvider() as fake:
        base = None
        rows = [
            ("answers 500 every time", "500", http_error(500), HEALTHY_SESSIONS, True),
            ("hangs, hedging off", "hang", hang(), HEALTHY_SESSIONS, False),
            ("hangs, hedging on", "hang", hang(), HEALTHY_SESSIONS, True),
            ("hangs, never answered before", "hang", hang(), 0, True),
        ]
        for label, name, fault, healthy, hedge in rows:
            median, first, following = _scenario(fake, fault, healthy, hedge)
            base = median if median is not None else base
            assert base is not None
            extra_first, extra_next = first - base, following - base
            goal_first = GOALS[(name, "first")] if healthy else float("nan")
            print(
                f"{label:32} {base:9.2f} {first:8.2f} {extra_first:+7.2f} "
                f"{goal_first:5.1f}  {following:7.2f} {extra_next:+7.2f} "
                f"{GOALS[(name, 'next')]:5.1f}",
                flush=True,
            )
        print(
            "\nhedging on a slow tail: 30 sessions, the primary answers in 2 s one time "
            "in ten, else at once"
        )
        print(f"{'':12} {'seconds':>8} {'requests':>9} {'cost $':>10}")
        for hedge in (False, True):
            seconds, requests, cost = _tail(fake, hedge)
            print(
                f"{'hedging on' if hedge else 'hedging off':12} {seconds:8.2f} "
                f"{requests:9d} {cost:10.6f}",
                flush=True,
            )
        print("\nchat, streamed through memory.chat.turn.answer, the shipped policy")
        print(
            f"{'chat model':32} {'1st s':>7} {'2nd s':>7} {'3rd s':>7} {'2nd extra':>9} {'goal':>5}"
        )
        baseline = _chat(fake, None)
        print(f"{'healthy (baseline)':32} " + " ".join(f"{t:7.2f}" for t in baseline))
        for label, fault in (("answers 500 every time", http_error(500)), ("hangs", hang())):
            times = _chat(fake, fault)
            print(
                f"{label:32} "
                + " ".join(f"{t:7.2f}" for t in times)
                + f" {times[1] - baseline[1]:+9.2f} {1.0:5.1f}",
                flush=True,
            )
