"""The sessions browser with 5,000 finished sessions (KEPT_BENCH_SESSIONS sets how many):
the list read cold (no cache), then warm, and the time from F2 to the list on screen."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from tests.bench.bench_search import WORDS


def build(root: Path, count: int) -> None:
    done = root / "sessions" / "done"
    done.mkdir(parents=True)
    history = []
    for n in range(count):
        day = f"{2015 + n // 500:04d}-{1 + n // 40 % 12:02d}-{1 + n % 28:02d}"
        stamp = f"{day}T10:{n % 60:02d}:00+00:00"
        sid = f"{day.replace('-', '')}-10{n % 60:02d}00-{n:06x}"
        lines = [
            {"kept": "session", "version": 1, "id": sid, "created": stamp, "model": "gpt-4.1-mini"}
        ]
        for i in range(20):
            lines.append(
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": " ".join(WORDS[(n + i + k) % len(WORDS)] for k in range(80)),
                    "time": stamp,
                }
            )
        lines.append({"mark": "pending", "start": 0, "end": 20, "closed": True})
        lines.append({"mark": "consolidated", "start": 0, "end": 20, "model": "x"})
        (done / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        history.append(
            f"[{day} 10:{n % 60:02d}] Session {n} was about "
            f"{WORDS[n % len(WORDS)]}. More words follow.\n\n"
        )
    (root / "HISTORY.md").write_text("".join(history))


def main() -> None:
    count = int(os.environ.get("KEPT_BENCH_SESSIONS", "5000"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, count)
        os.environ["KEPT_DATA_DIR"] = tmp
        os.environ["KEPT_CONFIG_DIR"] = str(root / "config")
        from memory import MemoryStore
        from memory.sessions.browse import list_sessions

        store = MemoryStore()
        started = time.perf_counter()
        cold = list_sessions(store)
        cold_s = time.perf_counter() - started
        warm = []
        for _ in range(5):
            started = time.perf_counter()
            list_sessions(store)
            warm.append(time.perf_counter() - started)
        print(
            f"{len(cold):,} sessions listed: cold (every journal read, cache written) "
            f"{cold_s * 1000:.0f} ms; warm (from the cache) "
            f"{statistics.median(warm) * 1000:.0f} ms"
        )
        print(
            f"F2 to the newest sessions on screen, warm: {shown() * 1000:.0f} ms (the "
            "screen is up at once, the list follows from a thread, 200 rows at a time)"
        )


def shown() -> float:
    from textual.widgets import OptionList

    from tests.support import make_app

    async def once() -> float:
        app = make_app(None, env={"OPENAI_API_KEY": "sk-bench"})
        async with app.run_test(size=(120, 40)) as pilot:
            while app.ready_at is None:
                await pilot.pause()
            started = time.perf_counter()
            await pilot.press("f2")
            while True:
                options = app.screen.query("#sessions")
                if options and options.first(OptionList).option_count:
                    return time.perf_counter() - started
                await pilot.pause(0.005)

    return statistics.median(asyncio.run(once()) for _ in range(3))


if __name__ == "__main__":
    main()
