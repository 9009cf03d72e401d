"""Searching every word: `kept memory grep` over history and finished transcripts beside
`grep -r` over the same files in the same run (with the search index, and with none), and
the time to the first results in /grep.

KEPT_BENCH_MB sets the size (default 200: years of heavy use); half is history, half is
session journals of about 40 KB each.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from tests.bench.bench_search import CASES, RUNS, WORDS, kept_against_grep


def build(root: Path, size: int) -> int:
    """History archives and done journals of about `size` bytes in all; the files' count."""
    rng = random.Random(11)
    archive = root / "history"
    done = root / "sessions" / "done"
    archive.mkdir(parents=True)
    done.mkdir(parents=True)
    written, files, month = 0, 0, 0
    while written < size // 2:
        month += 1
        year, mon = 2000 + month // 12, month % 12 + 1
        lines = [
            f"[{year:04d}-{mon:02d}-{day:02d} 09:00] "
            + " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60)))
            + ".\n\n"
            for day in range(1, 29)
            for _ in range(24)
        ]
        if month % 10 == 0:
            lines.append(f"[{year:04d}-{mon:02d}-28 23:00] The rare word quokka.\n\n")
        data = "".join(lines).encode()
        (archive / f"{year:04d}-{mon:02d}.md").write_bytes(data)
        written, files = written + len(data), files + 1
    session = 0
    while written < size:
        session += 1
        day = 1 + session % 28
        year, mon = 2010 + session // 3000, 1 + session // 250 % 12
        stamp = f"{year:04d}-{mon:02d}-{day:02d}T10:00:00+00:00"
        sid = f"{year:04d}{mon:02d}{day:02d}-100000-{session:06x}"
        lines = [
            json.dumps(
                {
                    "kept": "session",
                    "version": 1,
                    "id": sid,
                    "created": stamp,
                    "model": "gpt-4.1-mini",
                }
            )
        ]
        for i in range(60):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 100)))
            if session % 40 == 0 and i == 7:
                words += " the rare word quokka"
            lines.append(
                json.dumps(
                    {
                        "role": "user" if i % 2 == 0 else "assistant",
                        "content": words,
                        "time": stamp,
                    },
                    ensure_ascii=False,
                )
            )
        lines.append(json.dumps({"mark": "pending", "start": 0, "end": 60, "closed": True}))
        lines.append(
            json.dumps({"mark": "consolidated", "start": 0, "end": 60, "model": "gpt-4.1-mini"})
        )
        data = ("\n".join(lines) + "\n").encode()
        (done / f"{sid}.jsonl").write_bytes(data)
        written, files = written + len(data), files + 1
    return files


def first_results(root: Path, pattern: str) -> tuple[float, float]:
    """Seconds from Enter in /grep to the first matches on screen, and to the last."""
    from textual.widgets import Input, OptionList, Static

    from app.screens.search import SearchScreen
    from tests.support import make_app

    async def once() -> tuple[float, float]:
        app = make_app(None, env={"OPENAI_API_KEY": "sk-bench"})
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press(*"/grep", "enter")
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            # As when a pattern is typed: the screen's look at the index is over.
            await app.workers.wait_for_complete(
                [w for w in app.workers if w.group == "search-index"]
            )
            screen.query_one("#pattern", Input).value = pattern
            results = screen.query_one("#results", OptionList)
            started = time.perf_counter()
            screen.search()
            first = None
            while True:
                await pilot.pause(0.005)
                if first is None and results.option_count:
                    first = time.perf_counter() - started
                summary = str(screen.query_one("#search-summary", Static).render())
                if summary and summary != "Searching…":
                    return first or time.perf_counter() - started, time.perf_counter() - started

    runs = [asyncio.run(once()) for _ in range(3)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    size = int(float(os.environ.get("KEPT_BENCH_MB", "200")) * 2**20)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        started = time.perf_counter()
        files = build(root, size)
        total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20
        print(
            f"{total:.0f} MB in {files:,} files (built in {time.perf_counter() - started:.0f}"
            f" s; KEPT_BENCH_MB sets the size); median of {RUNS} runs, each a new process"
        )
        kept_against_grep(root, [str(root / "history"), str(root / "sessions")], CASES)
        os.environ["KEPT_DATA_DIR"] = str(root)
        os.environ["KEPT_CONFIG_DIR"] = str(root / "config")
        for pattern in ("quokka", "piano museum"):
            first, last = first_results(root, pattern)
            print(
                f"/grep {pattern!r}: first results on screen {first * 1000:.0f} ms, search "
                f"done {last * 1000:.0f} ms (goal: first ≤ 100 ms; from the search's start "
                "in the screen to its list showing a match, in the app)"
            )


if __name__ == "__main__":
    main()
