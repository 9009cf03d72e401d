"""Tool servers for the chat: the time from starting a stdio server to its tools listed
(beside the bare start of a Python process importing the SDK, in the same run), a tool
call's round trip, and what the tools' schemas add to every chat request."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from catalog.mcp import ServerSpec, ToolBox
from memory import LiveSession, MemoryStore
from memory.chat.turn import answer
from tests.fakes.provider import FakeProvider, text
from tests.support import FAST_POLICY, fake_catalog

SERVER = str(Path(__file__).parents[2] / "mcp_tool_server.py")


def bare_start() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
    return time.perf_counter() - started


async def start_and_calls(logs: Path) -> tuple[float, list[float], int]:
    box = ToolBox(
        [ServerSpec("t", command=sys.executable, args=(SERVER,), enabled=True)], logs=logs
    )
    started = time.perf_counter()
    assert await box.start_enabled() == []
    start = time.perf_counter() - started
    tool = box.find("t__echo")
    assert tool is not None
    calls = []
    for i in range(50):
        began = time.perf_counter()
        result = await box.call(tool, json.dumps({"text": str(i)}))
        calls.append(time.perf_counter() - began)
        assert not result.error
    tokens = box.servers["t"].tokens()
    await box.close()
    return start, calls, tokens


def request_bytes(root: Path, tools: ToolBox | None) -> int:
    with FakeProvider() as fake:
        fake.default = text("ok")
        session = LiveSession.start(MemoryStore(root), "gpt-4.1-mini")
        session.append({"role": "user", "content": "Hello"})

        async def go() -> None:
            turn = await answer(
                session, fake_catalog(fake), "gpt-4.1-mini", policy=FAST_POLICY, tools=tools
            )
            assert turn.ok, turn.reason
            if tools is not None:
                await tools.close()

        asyncio.run(go())
        return len(json.dumps(fake.requests[0].body, ensure_ascii=False).encode())


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        bare = statistics.median(bare_start() for _ in range(5))
        runs = [asyncio.run(start_and_calls(root / "logs")) for _ in range(5)]
        start = statistics.median(r[0] for r in runs)
        call = statistics.median(c for r in runs for c in r[1])
        tokens = runs[0][2]
        plain = request_bytes(root / "a", None)
        spec = ServerSpec("t", command=sys.executable, args=(SERVER,), enabled=True)
        with_tools = request_bytes(root / "b", ToolBox([spec], logs=root / "logs"))
    print(f"stdio server start to tools listed: {start * 1000:,.0f} ms (median of 5)")
    print(f"  baseline, python importing the SDK and exiting: {bare * 1000:,.0f} ms")
    print(f"tool call round trip over stdio: {call * 1000:,.1f} ms (median of 250)")
    print(
        f"chat request: {plain:,} bytes plain, {with_tools:,} bytes with the test server's "
        f"9 tools (~{tokens:,} tokens by Kept's estimate)"
    )


if __name__ == "__main__":
    main()
