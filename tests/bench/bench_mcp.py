"""`kept mcp`: the time from starting it to its first tool answer, beside `kept memory show`
(a command that reads MEMORY.md and exits) in the same run; and a search over a year of
history through MCP beside the same search through `kept memory grep`, in turn.

KEPT_BENCH_MB sets the history's size (default 30: about a year of daily use); half is
history, half session journals, as bench_search_transcripts builds them.
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

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation, TextContent

from tests.bench.bench_search_transcripts import build

RUNS = 5
KEPT = str(Path(sys.executable).with_name("kept"))
PATTERNS = ("quokka", "piano museum")


def _params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=KEPT, args=["mcp"], env=env)


async def _answer(client: ClientSession, tool: str, arguments: dict[str, object]) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error and isinstance(result.content[0], TextContent), result
    return result.content[0].text


def start_up(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting `kept mcp` to its answer to initialize, and to its first
    tool answer (read_memory)."""

    async def once() -> tuple[float, float]:
        started = time.perf_counter()
        async with (
            stdio_client(_params(env)) as (read, write),
            ClientSession(read, write, client_info=Implementation(name="bench", version="1")) as c,
        ):
            await c.initialize()
            ready = time.perf_counter() - started
            await _answer(c, "read_memory", {})
            return ready, time.perf_counter() - started

    return asyncio.run(once())


def command(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds for one `kept` command in a new process, and the lines it printed."""
    started = time.perf_counter()
    done = subprocess.run([KEPT, *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return time.perf_counter() - started, len(done.stdout.splitlines())


def searches(env: dict[str, str], pattern: str) -> tuple[list[float], list[float], int, int]:
    """Each run in turn: a search through a running `kept mcp` (the server already up, as
    an agent's is), and the same search through `kept memory grep` (a new process); the
    times, the answer's size and grep's lines."""

    async def run() -> tuple[list[float], list[float], int, int]:
        through_mcp: list[float] = []
        through_grep: list[float] = []
        size = lines = 0
        async with (
            stdio_client(_params(env)) as (read, write),
            ClientSession(read, write, client_info=Implementation(name="bench", version="1")) as c,
        ):
            await c.initialize()
            for _ in range(RUNS):
                started = time.perf_counter()
                size = len(await _answer(c, "search_memory", {"query": pattern, "limit": 100}))
                through_mcp.append(time.perf_counter() - started)
                seconds, lines = await asyncio.to_thread(
                    command, ["memory", "grep", "-i", pattern], env
                )
                through_grep.append(seconds)
        return through_mcp, through_grep, size, lines

    return asyncio.run(run())


def main() -> None:
    size = int(float(os.environ.get("KEPT_BENCH_MB", "30")) * 2**20)
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        env = {"KEPT_DATA_DIR": str(empty), "KEPT_CONFIG_DIR": str(empty / "config")}
        env = {**os.environ, **env}
        runs = []
        for _ in range(RUNS):  # in turn, so both see the machine as it is
            runs.append((*start_up(env), command(["memory", "show"], env)[0]))
        ready = statistics.median(r[0] for r in runs)
        first = statistics.median(r[1] for r in runs)
        show = statistics.median(r[2] for r in runs)
        print(
            f"kept mcp start-up: initialize answered {ready * 1000:.0f} ms, first tool answer "
            f"{first * 1000:.0f} ms; kept memory show (start-up and a read) {show * 1000:.0f} ms"
            f" (median of {RUNS}, each a new process)"
        )

        root = Path(tmp) / "data"
        started = time.perf_counter()
        files = build(root, size)
        built = time.monotonic()
        from memory.recall import index
        from memory.recall.search import Places, searched_files

        # Both searches ask the same index, complete: it leaves out a file changed within
        # SETTLE_SECONDS (its time may not have ticked), so it is built once they are past.
        time.sleep(max(0.0, index.SETTLE_SECONDS - (time.monotonic() - built)) + 0.1)
        index.refresh(root)
        assert index.lookup(root, searched_files(Places(root)), {}).unindexed == 0
        total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20
        print(
            f"{total:.0f} MB of history in {files:,} files (built in "
            f"{time.perf_counter() - started:.0f} s; KEPT_BENCH_MB sets the size)"
        )
        env = {**os.environ, "KEPT_DATA_DIR": str(root), "KEPT_CONFIG_DIR": str(root / "config")}
        print(f"{'search':16} {'kept mcp':>9} {'grep cmd':>9} {'ratio':>6}  answer")
        for pattern in PATTERNS:
            through_mcp, through_grep, chars, lines = searches(env, pattern)
            mcp_s, grep_s = statistics.median(through_mcp), statistics.median(through_grep)
            print(
                f"{pattern!r:16} {mcp_s:8.3f}s {grep_s:8.3f}s {mcp_s / grep_s:5.2f}x  "
                f"{chars:,} characters through MCP (first 100 of each kind); grep {lines:,} lines"
            )
        print(
            f"(median of {RUNS}; kept mcp: a call to the running server, from request to "
            "answer; grep cmd: `kept memory grep -i` in a new process, start-up included)"
        )


if __name__ == "__main__":
    main()
