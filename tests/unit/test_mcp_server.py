"""`kept mcp` driven over real stdio by the MCP SDK's own client: tools, resources, writes
attributed to the client, review, writes switched off, private sessions never visible,
wrong arguments as one sentence, and a running Kept writing beside it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Implementation, TextContent, TextResourceContents

from memory import LiveSession, MemoryStore
from memory.consolidation.review import accept, proposals
from memory.settings import MemorySettings
from tests.support import listening, subprocess_env, until

ROOT = Path(__file__).parents[2]
DEADLINE = 120.0  # far above the work, for a busy machine
CLIENT = "test-agent"
T = TypeVar("T")


async def serve(
    work: Callable[[ClientSession], Awaitable[T]],
    *,
    name: str = CLIENT,
    args: tuple[str, ...] = (),
    errlog: TextIO = sys.stderr,
) -> T:
    """Start `kept mcp` as a child process, connect as the client `name`, run `work`."""

    async def session() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "app.cli.main", "mcp", *args],
            env={k: os.environ[k] for k in ("KEPT_DATA_DIR", "KEPT_CONFIG_DIR", "KEPT_DEVICE")},
            cwd=ROOT,
        )
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read,
                write,
                read_timeout_seconds=DEADLINE,
                client_info=Implementation(name=name, version="1.0"),
            ) as client,
        ):
            await client.initialize()
            return await work(client)

    return await asyncio.wait_for(session(), DEADLINE)


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


async def call(tool: str, arguments: dict[str, Any] | None = None, **kw: Any) -> CallToolResult:
    async def work(client: ClientSession) -> CallToolResult:
        return await client.call_tool(tool, arguments or {})

    return await serve(work, **kw)


def configure(toml: str) -> None:
    folder = Path(os.environ["KEPT_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(toml, encoding="utf-8")


def finished(store: MemoryStore, said: str, *, entry: str | None = None) -> str:
    """A consolidated session in done/ whose user said `said` (and its history entry)."""
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": said})
    segment = journal.mark_pending(close=True)
    assert segment is not None
    journal.mark_consolidated(segment, "gpt-4.1-mini")
    store.settle(journal)
    if entry:
        store.append_history(f"[2026-11-20 10:00] {entry}")
    return journal.id


def kept(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli.main", *args],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


# --- reading -----------------------------------------------------------------------------------


async def test_tools_and_resources_read_memory_instructions_history_and_sessions() -> None:
    store = MemoryStore().ensure()
    store.write_memory("# About the user\n- Name: Ana\n- Has a quokka called Pip\n")
    store.instructions_path.write_text("Answer in metric units.\n", encoding="utf-8")
    session = finished(store, "My quokka is called Pip", entry="Talked about the quokka.")

    async def work(client: ClientSession) -> dict[str, Any]:
        tools = await client.list_tools()
        resources = await client.list_resources()
        return {
            "tools": {t.name for t in tools.tools},
            "resources": {str(r.uri) for r in resources.resources},
            "memory": text(await client.call_tool("read_memory", {})),
            "instructions": text(await client.call_tool("read_instructions", {})),
            "search": text(await client.call_tool("search_memory", {"query": "QUOKKA"})),
            "sessions": text(await client.call_tool("recent_sessions", {"limit": 5})),
            "memory_resource": await client.read_resource("kept://memory"),
            "instructions_resource": await client.read_resource("kept://instructions"),
        }

    got = await serve(work)
    assert got["tools"] == {
        "search_memory",
        "read_memory",
        "read_instructions",
        "recent_sessions",
        "remember",
    }
    assert got["resources"] == {"kept://memory", "kept://instructions"}
    assert got["memory"] == "# About the user\n- Name: Ana\n- Has a quokka called Pip\n"
    assert got["instructions"] == "Answer in metric units.\n"
    assert got["search"].startswith("In MEMORY.md:\n- Has a quokka called Pip\n\n")
    assert "[2026-11-20 10:00] Talked about the quokka." in got["search"]
    assert f"session {session}, user: My quokka is called Pip" in got["search"]
    assert session in got["sessions"] and "My quokka is called Pip" in got["sessions"]
    for name, expected in (("memory", "- Name: Ana"), ("instructions", "metric units")):
        contents = got[f"{name}_resource"].contents
        assert isinstance(contents[0], TextResourceContents) and expected in contents[0].text


async def test_a_credential_said_in_a_session_is_redacted_in_search() -> None:
    store = MemoryStore().ensure()
    finished(store, "the quokka key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
    found = text(await call("search_memory", {"query": "quokka key"}))
    assert "quokka key is" in found and "abcdefghijklmnopqrstuvwxyz" not in found


# --- private sessions ---------------------------------------------------------------------------


async def test_a_private_session_is_never_visible_through_any_tool_or_resource() -> None:
    store = MemoryStore().ensure()
    finished(store, "a public wombat")
    live = LiveSession.start(store, "gpt-4.1-mini", private=True)  # open in "another window"
    try:
        live.append({"role": "user", "content": "secret wombat plans"})

        async def work(client: ClientSession) -> list[str]:
            said = [
                text(await client.call_tool("search_memory", {"query": "wombat"})),
                text(await client.call_tool("search_memory", {"query": "secret"})),
                text(await client.call_tool("recent_sessions", {"limit": 100})),
                text(await client.call_tool("read_memory", {})),
                text(await client.call_tool("read_instructions", {})),
            ]
            for uri in ("kept://memory", "kept://instructions"):
                for content in (await client.read_resource(uri)).contents:
                    assert isinstance(content, TextResourceContents)
                    said.append(content.text)
            return said

        everything = "\n".join(await serve(work))
        assert live.journal.path.exists()  # it was there all along, live
    finally:
        live.release()
    assert "a public wombat" in everything
    assert "secret" not in everything.replace("'secret'", "")
    assert live.journal.id not in everything


# --- writing ------------------------------------------------------------------------------------


async def test_remember_writes_a_version_that_blame_attributes_to_the_client() -> None:
    store = MemoryStore().ensure()
    store.write_memory("- Name: Ana\n")
    answer = text(
        await call("remember", {"line": "Prefers \x1b[31mmetric units"}, name="Claude Code")
    )
    assert answer.startswith("Remembered: MEMORY.md version ")
    assert store.read_memory().text == "- Name: Ana\n- Prefers metric units\n"
    version = store.latest_version()
    assert version is not None and "via Claude Code" in version.source
    blame = kept("memory", "blame")
    assert blame.returncode == 0, blame.stderr
    line = next(row for row in blame.stdout.splitlines() if "metric units" in row)
    assert "via Claude Code" in line


async def test_remember_obeys_the_budget_and_says_so_in_one_sentence() -> None:
    configure("[memory]\nmemory_max_chars = 500\n")
    store = MemoryStore(settings=MemorySettings(memory_max_chars=500)).ensure()
    store.write_memory("- " + "x" * 480 + "\n")
    result = await call("remember", {"line": "one more fact that does not fit"})
    assert result.is_error
    assert text(result) == (
        "MEMORY.md would be 517 characters, over its 500 budget; `kept memory tidy` it first."
    )
    assert "one more fact" not in store.read_memory().text


async def test_with_review_before_remember_is_a_proposal_accepted_in_kept() -> None:
    configure('[memory]\nreview = "before"\n')
    store = MemoryStore().ensure()
    store.write_memory("- Name: Ana\n")
    answer = text(await call("remember", {"line": "Prefers metric units"}))
    assert answer.startswith("Proposed: the line waits for the user's review in Kept")
    assert store.read_memory().text == "- Name: Ana\n"  # nothing written yet
    [proposal] = proposals(store)
    assert proposal.model == f"via {CLIENT}"
    assert proposal.memory_update == "- Name: Ana\n- Prefers metric units\n"
    waiting = kept("memory", "review").stdout
    assert f"] via {CLIENT}: " in waiting and "by via" not in waiting
    accept(store, proposal)
    assert store.read_memory().text == "- Name: Ana\n- Prefers metric units\n"
    blame = kept("memory", "blame")
    line = next(row for row in blame.stdout.splitlines() if "metric units" in row)
    assert f"via {CLIENT}" in line


async def test_with_writes_off_remember_is_not_offered() -> None:
    configure("[mcp.server]\nallow_writes = false\n")
    store = MemoryStore().ensure()

    async def work(client: ClientSession) -> tuple[set[str], CallToolResult]:
        tools = {t.name for t in (await client.list_tools()).tools}
        return tools, await client.call_tool("remember", {"line": "Prefers metric units"})

    tools, result = await serve(work)
    assert "remember" not in tools and "read_memory" in tools
    assert result.is_error and text(result) == "Unknown tool: remember"
    assert not store.memory_path.exists()


# --- bad input ----------------------------------------------------------------------------------


async def test_wrong_arguments_are_one_sentence_never_a_traceback() -> None:
    async def work(client: ClientSession) -> list[CallToolResult]:
        return [
            await client.call_tool("search_memory", {"query": 3}),
            await client.call_tool("search_memory", {"query": "a", "limit": "ten"}),
            await client.call_tool("search_memory", {}),
            await client.call_tool("recent_sessions", {"limit": 0}),
            await client.call_tool("recent_sessions", {"limit": 10**30}),
            await client.call_tool("remember", {"line": ["a", "b"]}),
            await client.call_tool("remember", {"line": "   "}),
            await client.call_tool("search_memory", {"query": "x" * 5000}),
        ]

    answers = await serve(work)
    assert [text(a) for a in answers[:4]] == [
        "search_memory: 'query' must be a word or phrase (1 to 1,000 characters), not 3.",
        "search_memory: 'limit' must be a whole number from 1 to 100, not 'ten'.",
        "search_memory needs 'query'.",
        "recent_sessions: 'limit' must be a whole number from 1 to 100, not 0.",
    ]
    for answer in answers:
        said = text(answer)
        assert answer.is_error, said
        assert "Traceback" not in said and "pydantic" not in said and "\n" not in said
        assert len(said) < 200, said


def test_http_refuses_a_non_loopback_bind_in_one_sentence() -> None:
    # 127.0.1.1 is loopback too, but the SDK guards only these three against DNS rebinding.
    for host in ("0.0.0.0", "127.0.1.1"):
        done = kept("mcp", "--http", "8765", "--host", host)
        assert done.returncode == 2
        assert done.stderr == (
            f"kept mcp: --host {host} is not 127.0.0.1, ::1 or localhost; Kept serves memory "
            "only to this machine, on an address guarded against DNS rebinding.\n"
        )
    done = kept("mcp", "--http", "70000")
    assert done.returncode == 2
    assert done.stderr == "kept mcp: --http takes a port from 1 to 65535, not 70000.\n"


# --- beside a running Kept ----------------------------------------------------------------------


async def test_two_processes_writing_at_once_lose_no_line() -> None:
    store = MemoryStore().ensure()
    count = 15
    errors: list[BaseException] = []

    def kept_writes() -> None:  # this process, as a running Kept's /remember would
        try:
            for n in range(count):
                store.remember(f"from kept {n}")
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    async def work(client: ClientSession) -> list[str]:
        writer = threading.Thread(target=kept_writes)
        writer.start()
        answers = [
            text(await client.call_tool("remember", {"line": f"from the agent {n}"}))
            for n in range(count)
        ]
        await asyncio.to_thread(writer.join, DEADLINE)
        return answers

    answers = await serve(work)
    assert not errors
    assert all(a.startswith("Remembered:") for a in answers), answers
    lines = store.read_memory().text.splitlines()
    assert sorted(lines) == sorted(
        [f"- from kept {n}" for n in range(count)] + [f"- from the agent {n}" for n in range(count)]
    )
    assert len(store.version_numbers()) == 2 * count


def test_a_version_remembered_via_a_client_is_still_a_remembered_line() -> None:
    from memory.data.versions import VersionKind

    prose = VersionKind.REMEMBERED.describe(via="Claude Code")
    assert prose == "remembered via Claude Code"
    assert VersionKind.of(prose) is VersionKind.REMEMBERED
    assert VersionKind.REMEMBERED.describe() == "remembered"


async def test_http_serves_the_same_tools_on_loopback() -> None:
    import socket

    from mcp.client.streamable_http import streamable_http_client

    MemoryStore().ensure().write_memory("- Name: Ana\n")
    with socket.socket() as probe:  # a free port, given back just before the server takes it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "mcp", "--http", str(port)],
        cwd=ROOT,
        env=subprocess_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await until(
            lambda: listening(port) or child.poll() is not None,
            deadline=DEADLINE,
            message="kept mcp --http to listen",
        )
        assert child.poll() is None, child.stderr.read() if child.stderr else ""

        async def work() -> tuple[set[str], str]:
            async with (
                streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
                ClientSession(read, write, read_timeout_seconds=DEADLINE) as client,
            ):
                await client.initialize()
                tools = {t.name for t in (await client.list_tools()).tools}
                return tools, text(await client.call_tool("read_memory", {}))

        tools, memory = await asyncio.wait_for(work(), DEADLINE)
    finally:
        child.terminate()
        child.wait(DEADLINE)
    assert "search_memory" in tools and "remember" in tools
    assert memory == "- Name: Ana\n"


def test_kept_mcp_starts_without_the_ui_or_the_model_library() -> None:
    """Start-up is answering initialize: Textual and litellm are never imported for it."""
    probe = (
        "import sys; from app.cli.main import main; main(['mcp']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'litellm'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=subprocess_env(),
        stdin=subprocess.DEVNULL,  # the client closes at once: the server ends
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


async def test_an_unreadable_memory_file_is_one_sentence_from_every_tool_and_resource(
    tmp_path: Path,
) -> None:
    store = MemoryStore().ensure()
    store.memory_path.mkdir()  # there, and not a file Kept can read

    async def work(client: ClientSession) -> list[str]:
        said = []
        for tool, arguments in (
            ("read_memory", {}),
            ("search_memory", {"query": "x"}),
            ("remember", {"line": "x"}),
        ):
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            said.append(text(result))
        try:
            await client.read_resource("kept://memory")
        except MCPError as exc:
            said.append(str(exc))
        return said

    with (tmp_path / "stderr.txt").open("w+") as errlog:
        said = await serve(work, errlog=errlog)
        errlog.seek(0)
        logged = errlog.read()
    sentence = f"{store.memory_path} cannot be read (Is a directory); check its owner"
    assert len(said) == 4 and all(s.startswith(sentence) for s in said), said
    assert "Traceback" not in logged and "Error" not in logged, logged


def test_search_says_how_many_summaries_it_left_out() -> None:
    from app.cli.mcp_server import search_text

    store = MemoryStore().ensure()
    store.write_memory("- Has a quokka\n")
    store.append_history("[2026-11-20 10:00] First quokka talk.")
    store.append_history("[2026-11-21 10:00] Second quokka talk.")
    found = search_text(store, "quokka", limit=1)
    assert found == (
        "In MEMORY.md:\n- Has a quokka\n\n[2026-11-21 10:00] Second quokka talk.\n\n"
        "(1 more matching summaries not shown.)"
    )
