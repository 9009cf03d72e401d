"""`kept mcp`: Kept's memory served to the user's other AI tools over the Model Context
Protocol (stdio, or streamable HTTP on loopback).

A client can search history and transcripts, read MEMORY.md and INSTRUCTIONS.md (as tools
and as resources), list recent sessions and, unless `[mcp.server] allow_writes = false`,
add a line to MEMORY.md. A private session is never reachable: search and the list both
leave private journals out. A write goes through the same lock as the command line, obeys
the memory budget, is a version naming the client, and with `[memory] review = "before"`
is held as a proposal for the user to accept in Kept instead.

Only what a request needs is imported, so `initialize` is answered quickly. The tools'
annotations are evaluated as written (no `from __future__ import annotations`): the SDK
reads them to build each tool's schema and to hand a tool its Context.
"""

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

from app.cli.errors import USAGE, CliError

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from pydantic import ValidationError

    from app.cli.context import Context as CliContext
    from memory.data.store import MemoryStore

SERVER_NAME = "kept"
# A client's name as a version names it: one short line.
CLIENT_NAME_CHARS = 60
SEARCH_MAX_CHARS = 16_000
# The hosts the SDK guards against DNS rebinding (a web page that points its own name at
# 127.0.0.1 must not reach the user's memory): another loopback address would go unguarded.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def client_name(ctx: "Context[Any, Any] | None") -> str:
    """The name the client gave in `initialize` (clientInfo), cleaned to one short line."""
    from memory.sanitize import clean_text

    params = ctx.session.client_params if ctx is not None else None
    name = params.client_info.name if params is not None else ""
    shown = " ".join(clean_text(name or "").split())[:CLIENT_NAME_CHARS].strip()
    return shown or "an MCP client"


def _sentence_for(tool: str, error: "ValidationError") -> str:
    """pydantic's validation error of a tool's arguments as Kept's one sentence."""
    detail = error.errors()[0]
    key = ".".join(str(part) for part in detail["loc"]) or "its arguments"
    if detail["type"] == "missing":
        return f"{tool} needs '{key}'."
    what = {
        "query": "a word or phrase (1 to 1,000 characters)",
        "pattern": "a word or phrase (1 to 1,000 characters)",
        "limit": "a whole number from 1 to 100",
        "line": "one line of text (1 to 2,000 characters)",
    }.get(key, "of the type its schema says")
    shown = repr(detail.get("input"))
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"{tool}: '{key}' must be {what}, not {shown}."


def search_text(store: "MemoryStore", query: str, limit: int) -> str:
    """MEMORY.md's lines, then history entries and transcript lines, that hold `query`
    (any case), newest first, credentials redacted; never a private session's."""
    from memory.consolidation.redact import redact
    from memory.recall.search import describe_message, search_history

    wanted = query.strip().casefold()
    remembered = [
        line for line in store.read_memory().text.splitlines() if wanted in line.casefold()
    ][:limit]
    result = search_history(store, query.strip(), limit=limit)
    if not remembered and not result.entries and not result.messages:
        return f"Nothing in Kept's memory or history mentions {redact(query.strip())!r}."
    parts: list[str] = []
    if remembered:
        parts.append("In MEMORY.md:\n" + "\n".join(remembered))
    used = sum(len(p) for p in parts)
    shown = 0
    for entry in result.entries:
        text = redact(entry.body)
        if used + len(text) > SEARCH_MAX_CHARS // 2:
            break
        parts.append(text)
        used += len(text)
        shown += 1
    if result.total > shown:
        parts.append(f"({result.total - shown} more matching summaries not shown.)")
    said = []
    for match in result.messages:
        line = redact(describe_message(match))
        if used + len(line) > SEARCH_MAX_CHARS:
            break
        said.append(line)
        used += len(line)
    if said:
        more = result.total_messages - len(said)
        tail = f"\n({more} more matching messages not shown.)" if more else ""
        parts.append("Said in sessions:\n" + "\n".join(said) + tail)
    return "\n\n".join(parts)


def sessions_text(store: "MemoryStore", limit: int) -> str:
    """The newest sessions, one line each (never a private one)."""
    from memory.sessions.browse import list_sessions

    rows = list_sessions(store)[:limit]
    if not rows:
        return "Kept has no sessions yet."
    return "\n".join(
        f"{s.started}  {s.id}  {s.state}  {s.messages} messages  {s.model}  {s.title}" for s in rows
    )


def remember_line(store: "MemoryStore", line: str, client: str) -> str:
    """Add `line` to MEMORY.md for `client` (a version naming it), or, with review =
    "before", hold it as a proposal; the sentence to answer. ValueError: nothing written."""
    from memory.settings import Review

    if store.settings.review is Review.BEFORE:
        session = propose_line(store, line, client)
        return (
            f"Proposed: the line waits for the user's review in Kept (session {session}); "
            "it is not in MEMORY.md until they accept it."
        )
    from app.words.memory import not_written

    try:
        number = store.remember(line, via=client)
    except ValueError as exc:  # a refusal, said in the words of someone outside the chat
        raise ValueError(not_written(exc, shell=True)) from None
    return f"Remembered: MEMORY.md version {number}."


def propose_line(store: "MemoryStore", line: str, client: str) -> str:
    """Hold a client's line as a proposal: a closed session that says who asked, with a
    proposal adding the line, for the user to accept or reject in Kept
    (memory.consolidation.review).
    The session's locks are taken before its journal exists and held until the proposal is
    written, so no running Kept takes it for a crashed session or consolidates it first."""
    from memory.consolidation.redact import redact
    from memory.consolidation.reply import SavedMemory
    from memory.consolidation.review import propose
    from memory.data.files import HeldLock, locked
    from memory.sanitize import clean_text
    from memory.sessions import journal as journals

    text = " ".join(redact(clean_text(line)).split())
    if not text:
        raise ValueError("Nothing to remember: the line is empty.")
    model = f"via {client}"
    base = store.read_memory()
    body = base.text.rstrip("\n")
    update = f"{body}\n- {text}\n" if body else f"- {text}\n"
    if len(update) > store.settings.memory_max_chars:
        raise ValueError(
            f"MEMORY.md would be {len(update):,} characters, over its "
            f"{store.settings.memory_max_chars:,} budget; tidy it in Kept first."
        )
    store.ensure()
    session = journals.new_session_id()
    live = HeldLock(store.layout.live_lock(session))
    if not live.acquire():  # a new id is no one's: this would be a bug, not a race
        raise OSError(f"session {session} is already open elsewhere; try again.")
    try:
        with locked(store.layout.claim_lock(session)):
            journal = journals.create(store.sessions_dir, model, session)
            journal.append({"role": "user", "content": f"({client} asks Kept to remember) {text}"})
            segment = journal.mark_pending(close=True)
            assert segment is not None  # one message was just appended
            entry = f"{client} asked to remember: {text}"
            saved = SavedMemory(entry, update)
            propose(store, session, segment, saved, base, model, datetime.now(UTC))
    finally:
        live.release()
    return session


def build_server(store: "MemoryStore", *, allow_writes: bool = True) -> "MCPServer[Any]":
    """The MCP server over `store`; without `allow_writes` the remember tool is not offered."""
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import Field, ValidationError

    Line = Annotated[
        str, Field(min_length=1, max_length=2000, description="one line to add to MEMORY.md")
    ]

    class KeptServer(MCPServer[Any]):
        async def call_tool(
            self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
        ) -> Any:
            """A tool's failure as one sentence, never the SDK's wording or a traceback."""
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, ValidationError):
                    raise ToolError(_sentence_for(name, cause)) from None
                if isinstance(cause, ToolError):
                    raise ToolError(str(cause)) from None
                raise

    server = KeptServer(
        SERVER_NAME,
        instructions="The user's memory kept by Kept: what it knows of them (MEMORY.md), "
        "how they want answers (INSTRUCTIONS.md), and a searchable history of their sessions.",
        log_level="WARNING",
    )
    _add_readers(server, store)
    _add_resources(server, store)
    if allow_writes:

        @server.tool(
            description="Add one line to the user's MEMORY.md (a fact or preference "
            "worth keeping). Kept keeps it as a version naming this client; it may "
            "instead wait for the user's review."
        )
        def remember(line: Line, ctx: Context[Any, Any]) -> str:
            try:
                return remember_line(store, line, client_name(ctx))
            except (OSError, ValueError) as exc:
                raise _fail(exc) from None

    return server


def _fail(exc: OSError | ValueError, kind: "type[Exception] | None" = None) -> Exception:
    """A file Kept cannot read or write, or a line it refuses: its sentence, sent back as
    the tool's (or, with `kind`, the resource's) error."""
    from mcp.server.mcpserver.exceptions import ToolError

    from memory.sanitize import clean_text

    text = str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)
    return (kind or ToolError)(clean_text(text))


def _add_readers(server: "MCPServer[Any]", store: "MemoryStore") -> None:
    """The tools that read: search, MEMORY.md, INSTRUCTIONS.md, recent sessions."""
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import Field

    Query = Annotated[str, Field(min_length=1, max_length=1000, description="a word or phrase")]
    Limit = Annotated[int, Field(ge=1, le=100, description="how many to return, 1 to 100")]

    fail = _fail

    @server.tool(
        description="Search the user's history with Kept: the dated summary of each "
        "session and every message said in them. Case-insensitive; newest first."
    )
    def search_memory(query: Query, limit: Limit = 20) -> str:
        if not query.strip():
            raise ToolError("search_memory needs a word or phrase to look for.")
        try:
            return search_text(store, query, limit)
        except OSError as exc:
            raise fail(exc) from None

    @server.tool(description="Read MEMORY.md: what Kept remembers about the user.")
    def read_memory() -> str:
        try:
            return memory_text(store)
        except OSError as exc:
            raise fail(exc) from None

    @server.tool(description="Read INSTRUCTIONS.md: how the user wants to be answered.")
    def read_instructions() -> str:
        try:
            return instructions_text(store)
        except OSError as exc:
            raise fail(exc) from None

    @server.tool(description="List the user's most recent sessions with Kept, newest first.")
    def recent_sessions(limit: Limit = 20) -> str:
        try:
            return sessions_text(store, limit)
        except OSError as exc:
            raise fail(exc) from None


def _add_resources(server: "MCPServer[Any]", store: "MemoryStore") -> None:
    """MEMORY.md and INSTRUCTIONS.md as resources."""
    from mcp.server.mcpserver.exceptions import ResourceError

    fail = _fail

    @server.resource(
        "kept://memory",
        name="MEMORY.md",
        mime_type="text/markdown",
        description="What Kept remembers about the user.",
    )
    def memory_resource() -> str:
        try:
            return memory_text(store)
        except OSError as exc:
            raise fail(exc, ResourceError) from None

    @server.resource(
        "kept://instructions",
        name="INSTRUCTIONS.md",
        mime_type="text/markdown",
        description="How the user wants to be answered.",
    )
    def instructions_resource() -> str:
        try:
            return instructions_text(store)
        except OSError as exc:
            raise fail(exc, ResourceError) from None


def memory_text(store: "MemoryStore") -> str:
    """MEMORY.md as a client reads it; OSError (MemoryUnreadable) says why it cannot be."""
    return store.read_memory().text or "MEMORY.md is empty: Kept has remembered nothing yet."


def instructions_text(store: "MemoryStore") -> str:
    """INSTRUCTIONS.md as a client reads it; OSError when it cannot be read."""
    text = store.read_instructions().text
    return text or "INSTRUCTIONS.md is empty: the user has written no instructions."


def loopback(host: str) -> bool:
    return host in LOOPBACK_NAMES


def cmd_mcp(args: argparse.Namespace, ctx: "CliContext") -> int:
    """Serve Kept's memory over MCP until the client closes the connection."""
    if args.http is not None and not loopback(args.host):
        raise CliError(
            f"kept mcp: --host {args.host} is not 127.0.0.1, ::1 or localhost; Kept serves "
            "memory only to this machine, on an address guarded against DNS rebinding.",
            USAGE,
        )
    if args.http is not None and not 0 < args.http < 65536:
        raise CliError(f"kept mcp: --http takes a port from 1 to 65535, not {args.http}.", USAGE)
    settings = ctx.settings
    for problem in settings.mcp.problems:
        print(problem, file=sys.stderr)  # stderr: stdout carries the protocol
    server = build_server(ctx.store, allow_writes=settings.mcp.server.allow_writes)
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.http)
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve Kept's memory to other AI tools over MCP (stdio; --http for loopback HTTP)",
    )
    mcp.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="serve streamable HTTP on this port instead of stdio",
    )
    mcp.add_argument("--host", default="127.0.0.1", help="loopback address for --http")
    mcp.set_defaults(func=cmd_mcp)
