"""Tool servers over the Model Context Protocol, as the chat uses them: start one, list its
tools, call a tool within a deadline, stop it. No Textual here, and no memory.

A stdio server gets only the environment the user listed for it plus the SDK's basics
(HOME, PATH, SHELL, TERM, USER, LOGNAME): never Kept's keys. A server that cannot start,
dies in a call or hangs past its deadline becomes FAILED with one sentence saying why, its
tools are no longer offered, and whoever asked gets that sentence as the call's result.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from catalog.mcp_limits import CALL_TIMEOUT, MAX_TOOL_TOKENS, START_TIMEOUT
from catalog.sanitize import clean_text

MAX_RESULT_CHARS = 20_000  # a tool's answer as the model sees it (the rest is cut, said)
SEPARATOR = "__"  # between server and tool in the name the model sees: "files__read"
_NAME = re.compile(r"[^A-Za-z0-9_-]")


def offered_name(server: str, tool: str) -> str:
    """The tool's name as the model sees it: the server's name first, within the 64
    characters and the letters every provider accepts."""
    return (_NAME.sub("_", server) + SEPARATOR + _NAME.sub("_", tool))[:64]


@dataclass(frozen=True)
class ServerSpec:
    """One tool server as the user declared it: a command to launch or a URL to reach."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = False
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpTool:
    """A tool one server offers."""

    server: str
    name: str
    description: str
    schema: Mapping[str, Any]

    @property
    def offered(self) -> str:
        return offered_name(self.server, self.name)

    def function(self) -> dict[str, Any]:
        """The tool in the chat-completions form every gateway takes."""
        schema = dict(self.schema) or {"type": "object", "properties": {}}
        return {
            "type": "function",
            "function": {
                "name": self.offered,
                "description": f"[{self.server}] {self.description}".strip()[:1024],
                "parameters": schema,
            },
        }

    def tokens(self) -> int:
        """About what the tool's schema costs on each request (4 characters a token)."""
        return len(json.dumps(self.function(), ensure_ascii=False)) // 4 + 1


class ServerState(StrEnum):
    OFF = "off"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class ToolResult:
    """What a call gave: the text the model sees, and whether it is an error (the tool's
    own, or the server's failure, which `server_failed` says)."""

    text: str
    error: bool = False
    server_failed: bool = False


def result_text(content: Iterable[Any], limit: int = MAX_RESULT_CHARS) -> str:
    """A tool's content blocks as clean text within `limit` characters; blocks that are
    not text are named, not inlined."""
    parts: list[str] = []
    for block in content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '?')}]")
        elif kind == "resource_link":
            parts.append(f"[resource: {getattr(block, 'uri', '?')}]")
        else:
            resource = getattr(block, "resource", None)
            text = getattr(resource, "text", None)
            parts.append(str(text) if text is not None else f"[{kind or 'content'}]")
    text = clean_text("\n".join(parts))
    if len(text) > limit:
        text = text[:limit] + f"\n[… {len(text) - limit:,} more characters cut]"
    return text


class ToolServer:
    """One server's connection, held open by a task of its own (the SDK's transport must be
    entered and left in one task); calls come from any task on the same loop."""

    def __init__(self, spec: ServerSpec, log: Path | None = None) -> None:
        self.spec = spec
        self.log = log
        self.state = ServerState.OFF
        self.reason = ""
        self.tools: tuple[McpTool, ...] = ()
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    @property
    def name(self) -> str:
        return self.spec.name

    def tokens(self) -> int:
        return sum(t.tokens() for t in self.tools)

    async def start(self, timeout: float = START_TIMEOUT) -> str:
        """Start the server and list its tools: "" when it is ready, else the sentence
        that says why not (it is FAILED then)."""
        if self.state in (ServerState.READY, ServerState.STARTING):
            return ""
        self.state, self.reason, self._stop = ServerState.STARTING, "", asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(ready), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except asyncio.CancelledError:  # whoever waited went away: the next start begins anew
            task, self._task, self._client = self._task, None, None
            self.state, self.reason, self.tools = ServerState.OFF, "", ()
            if task is not None:
                task.cancel()  # it was connecting, not waiting to be told to stop
                with contextlib.suppress(BaseException):
                    await task
            if ready.done() and not ready.cancelled():
                ready.exception()  # seen: a start given up is not an error to report
            raise
        except TimeoutError:
            await self._fail(f"did not start within {timeout:g} s")
        except Exception as exc:
            await self._fail(f"could not start ({self._why(exc)})")
        else:
            self.state = ServerState.READY
        return self.reason

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        log: TextIO | None = None
        try:
            if self.spec.url:
                from mcp.client.streamable_http import streamable_http_client
                from mcp.shared._httpx_utils import create_mcp_http_client

                transport: Any = streamable_http_client(
                    self.spec.url, http_client=create_mcp_http_client(dict(self.spec.headers))
                )
            else:
                from mcp.client.stdio import StdioServerParameters, stdio_client

                params = StdioServerParameters(
                    command=self.spec.command or "",
                    args=list(self.spec.args),
                    env=dict(self.spec.env),
                )
                log = _open_log(self.log)
                transport = stdio_client(params, errlog=log)
            async with Client(transport) as client:
                tools: list[McpTool] = []
                cursor: str | None = None
                for _ in range(50):  # pages; a server that pages forever is cut off
                    page = await client.list_tools(cursor=cursor)
                    tools += [
                        McpTool(self.name, t.name, clean_text(t.description or ""), t.input_schema)
                        for t in page.tools
                    ]
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                self.tools, self._client = tuple(tools), client
                if not ready.done():
                    ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            if log is not None:
                log.close()

    async def call(self, tool: str, arguments: Mapping[str, Any], timeout: float) -> ToolResult:
        """Call `tool`; a server that dies or hangs is stopped, FAILED, and said."""
        client = self._client
        if self.state is not ServerState.READY or client is None:
            why = f": {self.reason}" if self.reason else ""
            return ToolResult(f"Tool server {self.name} is not running{why}.", True, True)
        try:
            result = await asyncio.wait_for(client.call_tool(tool, dict(arguments)), timeout)
        except TimeoutError:
            await self._fail(f"did not answer {tool} within {timeout:g} s")
        except Exception as exc:
            from mcp.shared.exceptions import MCPError
            from mcp_types.jsonrpc import CONNECTION_CLOSED

            if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
                # The server answered this call with an error (an unknown tool, bad
                # arguments): it is still up.
                return ToolResult(f"{tool} failed: {clean_text(str(exc))}", True)
            await self._fail(f"stopped during {tool} ({self._why(exc)})")
        else:
            text = result_text(result.content)
            if not text and result.structured_content is not None:
                text = result_text([_Text(json.dumps(result.structured_content))])
            return ToolResult(text or "(no output)", bool(result.is_error))
        return ToolResult(f"Tool server {self.name} {self.reason}.", True, True)

    async def stop(self) -> None:
        """Stop the server (its process is ended by the SDK, bounded) and forget its tools."""
        await self._end()
        self.state, self.reason, self.tools = ServerState.OFF, "", ()

    async def _fail(self, reason: str) -> None:
        await self._end()
        self.state, self.reason, self.tools = ServerState.FAILED, clean_text(reason), ()

    async def _end(self) -> None:
        self._stop.set()
        task, self._task, self._client = self._task, None, None
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def _why(self, exc: BaseException) -> str:
        """An exception as words, with the last line the server wrote to its log."""
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            return self._why(exc.exceptions[0])
        words = clean_text(str(exc)).strip() or type(exc).__name__
        if isinstance(exc, FileNotFoundError):
            words = f"no command {self.spec.command!r}"
        said = _last_line(self.log)
        return f"{words}; it said: {said}" if said else words


@dataclass(frozen=True)
class _Text:
    text: str
    type: str = "text"


def _open_log(path: Path | None) -> TextIO:
    """Where a stdio server's stderr goes: its log file (a server's chatter must never
    reach the terminal Kept draws on), else nowhere."""
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            log = path.open("w", encoding="utf-8", errors="replace")
            return log
        except OSError:
            pass
    return open(os.devnull, "w", encoding="utf-8")  # closed by the holder


def _last_line(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 2000))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in clean_text(tail).splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


@dataclass(frozen=True)
class Offer:
    """The tools sent with a request, and, when the cap left some out, the sentence."""

    tools: tuple[McpTool, ...]
    notice: str = ""

    def functions(self) -> list[dict[str, Any]]:
        return [t.function() for t in self.tools]


class ToolBox:
    """Every declared server, each off until enabled: what the chat offers and calls."""

    def __init__(
        self,
        specs: Iterable[ServerSpec],
        *,
        logs: Path | None = None,
        start_timeout: float = START_TIMEOUT,
        call_timeout: float = CALL_TIMEOUT,
        max_tool_tokens: int = MAX_TOOL_TOKENS,
    ) -> None:
        self.servers = {
            s.name: ToolServer(s, logs / f"{_NAME.sub('_', s.name)}.log" if logs else None)
            for s in specs
        }
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.max_tool_tokens = max_tool_tokens
        self._allowed = {
            offered_name(s.name, t) for s in self.servers.values() for t in s.spec.allowed_tools
        }

    def __bool__(self) -> bool:
        return any(s.spec.enabled for s in self.servers.values())

    async def start_enabled(self) -> list[str]:
        """Start every enabled server not yet started (a FAILED one waits to be enabled
        again); one sentence for each that could not start."""
        waiting = [
            s for s in self.servers.values() if s.spec.enabled and s.state is ServerState.OFF
        ]
        reasons = await asyncio.gather(*(s.start(self.start_timeout) for s in waiting))
        return [
            f"Tool server {s.name} {why}; the chat goes on without its tools "
            "(turn it on again in /tools)."
            for s, why in zip(waiting, reasons, strict=True)
            if why
        ]

    async def set_enabled(self, name: str, enabled: bool) -> str:
        """Turn a server on (started now; "" or why it failed) or off (stopped)."""
        server = self.servers[name]
        from dataclasses import replace

        server.spec = replace(server.spec, enabled=enabled)
        await server.stop()
        return await server.start(self.start_timeout) if enabled else ""

    def offer(self) -> Offer:
        """The ready servers' tools, in declared order, within max_tool_tokens: a server
        whose tools would pass the cap is left out whole, and said."""
        tools: list[McpTool] = []
        left: list[str] = []
        total = 0
        for server in self.servers.values():
            if server.state is not ServerState.READY or not server.spec.enabled:
                continue
            cost = server.tokens()
            if total + cost > self.max_tool_tokens:
                left.append(f"{server.name} (~{cost:,} tokens)")
                continue
            total += cost
            tools += server.tools
        notice = ""
        if left:
            notice = (
                f"Tools of {', '.join(left)} are not sent: together they pass the "
                f"{self.max_tool_tokens:,}-token cap ([mcp] max_tool_tokens); turn a server "
                "off in /tools or raise the cap."
            )
        return Offer(tuple(tools), notice)

    def find(self, offered: str) -> McpTool | None:
        for server in self.servers.values():
            for tool in server.tools:
                if tool.offered == offered:
                    return tool
        return None

    def allowed(self, tool: McpTool) -> bool:
        return tool.offered in self._allowed

    def allow(self, tool: McpTool) -> None:
        """The user said "always" for this tool: no more questions about it."""
        self._allowed.add(tool.offered)

    async def call(self, tool: McpTool, arguments: str) -> ToolResult:
        """Call with the model's arguments (JSON text); bad JSON is a sentence back."""
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError:
            return ToolResult("The arguments were not valid JSON; send a JSON object.", True)
        if not isinstance(parsed, dict):
            return ToolResult("The arguments must be a JSON object.", True)
        return await self.servers[tool.server].call(tool.name, parsed, self.call_timeout)

    async def close(self) -> None:
        await asyncio.gather(*(s.stop() for s in self.servers.values()))
