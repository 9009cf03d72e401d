"""Tool servers over MCP: a real server written with the SDK (tests/mcp_tool_server.py),
spoken to over real stdio: tools that answer, fail, hang, die, return huge output or
escapes, and the environment a server is given."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from catalog.mcp import ServerSpec, ServerState, ToolBox, offered_name
from tests.support import listening, until

SERVER = str(Path(__file__).parents[1] / "mcp_tool_server.py")


def spec(name: str = "test", **kw: object) -> ServerSpec:
    return ServerSpec(name, command=sys.executable, args=(SERVER,), enabled=True, **kw)  # type: ignore[arg-type]


async def test_tools_are_listed_with_the_servers_name_and_answer(tmp_path: Path) -> None:
    box = ToolBox([spec(), ServerSpec("off", command="nonexistent-command")], logs=tmp_path)
    try:
        assert await box.start_enabled() == []
        assert box.servers["off"].state is ServerState.OFF  # never started: not enabled
        offer = box.offer()
        names = [t["function"]["name"] for t in offer.functions()]
        assert "test__echo" in names and "test__weather" in names
        assert not any(n.startswith("off__") for n in names)
        tool = box.find("test__echo")
        assert tool is not None
        result = await box.call(tool, '{"text": "hi"}')
        assert (result.text, result.error) == ("echo: hi", False)
        failed = await box.call(box.find("test__fail"), "{}")  # type: ignore[arg-type]
        assert failed.error and not failed.server_failed
        bad = await box.call(tool, "{not json")
        assert bad.error and "not valid JSON" in bad.text
        assert box.servers["test"].state is ServerState.READY  # none of that stopped it
    finally:
        await box.close()


async def test_a_stdio_server_gets_only_the_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-of-kept")
    monkeypatch.setenv("KEPT_SECRET_THING", "do-not-pass")

    box = ToolBox([spec(env={"GREETING": "hello"})], logs=tmp_path)
    try:
        await box.start_enabled()
        result = await box.call(box.find("test__environment"), "{}")  # type: ignore[arg-type]
        env = dict(json.loads(result.text))
    finally:
        await box.close()
    assert env["GREETING"] == "hello"
    assert "PATH" in env and "HOME" in env
    assert "OPENAI_API_KEY" not in env and "KEPT_SECRET_THING" not in env
    assert "sk-secret-of-kept" not in json.dumps(env)
    basics = {"GREETING", "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM"}
    assert not set(env) - basics - {"LC_CTYPE"}  # Python's own locale coercion in the child


async def test_a_server_that_cannot_start_is_one_sentence(tmp_path: Path) -> None:
    box = ToolBox(
        [
            spec("broken", env={"MCP_TEST_FAIL_START": "1"}),
            ServerSpec("missing", command="no-such-command-kept-test", enabled=True),
            spec("good"),
        ],
        logs=tmp_path,
    )
    try:
        notices = await box.start_enabled()
        assert len(notices) == 2
        assert "Tool server broken could not start" in notices[0]
        assert "refusing to start" in notices[0]  # what the server said on stderr
        assert "Tool server missing could not start" in notices[1]
        assert all("\n" not in n and "Traceback" not in n for n in notices)
        assert box.servers["broken"].state is ServerState.FAILED
        assert [t.server for t in box.offer().tools] == ["good"] * len(box.offer().tools)
    finally:
        await box.close()


async def test_a_server_that_dies_mid_call_or_hangs_fails_once_and_is_left_out(
    tmp_path: Path,
) -> None:
    box = ToolBox([spec("dies"), spec("hangs")], logs=tmp_path, call_timeout=3.0)
    try:
        await box.start_enabled()
        died = await box.call(box.find("dies__die"), "{}")  # type: ignore[arg-type]
        assert died.server_failed and "stopped during die" in died.text
        hung = await box.call(box.find("hangs__hang"), "{}")  # type: ignore[arg-type]
        assert hung.server_failed and "did not answer hang within 3 s" in hung.text
        assert box.servers["dies"].state is ServerState.FAILED
        assert box.servers["hangs"].state is ServerState.FAILED
        assert box.offer().tools == ()
        assert await box.start_enabled() == []  # a failed server waits to be enabled
        assert await box.set_enabled("dies", True) == ""  # enabled again: it restarts
        echo = await box.call(box.find("dies__echo"), '{"text": "back"}')  # type: ignore[arg-type]
        assert echo.text == "echo: back"
    finally:
        await box.close()


async def test_huge_output_is_cut_and_escapes_are_stripped(tmp_path: Path) -> None:
    box = ToolBox([spec()], logs=tmp_path)
    try:
        await box.start_enabled()
        huge = await box.call(box.find("test__huge"), "{}")  # type: ignore[arg-type]
        assert len(huge.text) < 21_000 and "more characters cut" in huge.text
        escapes = await box.call(box.find("test__escapes"), "{}")  # type: ignore[arg-type]
        assert "\x1b" not in escapes.text and "\x07" not in escapes.text
        assert "red" in escapes.text
    finally:
        await box.close()


async def test_the_cap_leaves_out_a_whole_server_and_says_so(tmp_path: Path) -> None:
    box = ToolBox([spec("first"), spec("second")], logs=tmp_path)
    try:
        await box.start_enabled()
        one = box.servers["first"].tokens()
        box.max_tool_tokens = one + 10
        offer = box.offer()
        assert {t.server for t in offer.tools} == {"first"}
        assert "second" in offer.notice and "[mcp] max_tool_tokens" in offer.notice
        box.max_tool_tokens = 2 * one + 10
        assert box.offer().notice == ""
    finally:
        await box.close()


def test_offered_names_are_what_providers_accept() -> None:
    assert offered_name("my files", "read.file") == "my_files__read_file"
    assert len(offered_name("s" * 40, "t" * 40)) == 64


async def test_a_server_over_http_gets_its_headers(tmp_path: Path) -> None:
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, SERVER, "--http", str(port)])
    try:
        # no event to wait on from another process
        await until(lambda: listening(port), deadline=120, message="the HTTP server to listen")
        url = f"http://127.0.0.1:{port}/mcp"
        good = ServerSpec(
            "web", url=url, headers={"Authorization": "Bearer test-token"}, enabled=True
        )
        box = ToolBox([good, ServerSpec("nokey", url=url, enabled=True)], logs=tmp_path)
        try:
            notices = await box.start_enabled()
            result = await box.call(box.find("web__echo"), '{"text": "over http"}')  # type: ignore[arg-type]
            assert result.text == "echo: over http"
            (notice,) = notices
            assert notice.startswith("Tool server nokey could not start")
            assert "\n" not in notice
        finally:
            await box.close()
    finally:
        process.terminate()
        process.wait(timeout=60)


async def test_a_start_given_up_leaves_the_server_off_to_start_again(tmp_path: Path) -> None:
    """Esc during a turn that waits for a slow server (or /tools closed while it starts):
    the server is not left half-started for ever, its process is stopped, and the next
    turn starts it again."""
    silent = ServerSpec(
        "slow", command=sys.executable, args=("-c", "import time; time.sleep(600)"), enabled=True
    )

    box = ToolBox([silent], logs=tmp_path)
    server = box.servers["slow"]
    waiting = asyncio.create_task(box.start_enabled())
    await until(lambda: server.state is ServerState.STARTING, message="the server's start")
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    state: ServerState = server.state  # not narrowed: the start changes it again below
    assert state is ServerState.OFF and server._task is None
    again = asyncio.create_task(box.start_enabled())  # the next turn tries it anew
    await until(lambda: server.state is ServerState.STARTING, message="the server's second start")
    again.cancel()
    with pytest.raises(asyncio.CancelledError):
        await again
    await box.close()
