"""One chat turn: the user's message, the model's answer, and any history searches and
tool calls between.

Every message is in the session journal before the next step starts, so a crash or a
cancelled reply loses nothing that was said or shown. A tool of a user's server (MCP) runs
only when the user allowed it, once or always; its result is journaled as the tool's words
(role "tool"), never as the user's, so consolidation cannot take it for something they said.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from catalog import (
    Attempt,
    Catalog,
    Kind,
    Reply,
    ReplyRejected,
    RetryPolicy,
    ToolCall,
    complete,
)
from catalog.health import HealthBook, State
from memory.chat.context import with_attachments
from memory.chat.system_prompt import system_prompt
from memory.recall.search import SEARCH_HISTORY_TOOL, run_search_tool
from memory.sanitize import clean_text
from memory.sessions.live import LiveSession

if TYPE_CHECKING:
    from catalog.mcp import McpTool, ToolBox

MAX_TOOL_ROUNDS = 8
CUT_OFF = "\n\n*[reply cut off]*"  # ends a reply whose stream broke: it says so in the journal


def _not_empty(reply: Reply) -> Reply:
    """A reply with neither words nor a tool call is no answer (a server that failed after
    HTTP 200 can send one): the walk goes on, and the user hears why if none answers."""
    if not reply.text.strip() and not reply.tool_calls:
        why = f" (finish: {reply.finish_reason})" if reply.finish_reason else ""
        raise ReplyRejected(f"sent an empty reply{why}", Kind.REJECTED)
    return reply


class Approval(StrEnum):
    """The user's answer when the model wants to run a tool."""

    ONCE = "once"  # y: run it this time
    ALWAYS = "always"  # a: run it, and never ask about this tool again
    DENY = "deny"  # n: do not run it; the model hears that the user declined


Approve = Callable[["McpTool", str], Awaitable[Approval]]
DECLINED = "The user declined to run this tool."


@dataclass(frozen=True)
class ToolRun:
    """A tool call of this turn, as the chat shows it: ran, failed or declined."""

    server: str
    tool: str
    arguments: str
    result: str
    status: str


class _CutOff(Exception):
    """A reply broke off after part of it was shown: the walk stops there, so the user
    keeps what they read instead of seeing it replaced by another model's answer."""


@dataclass
class Turn:
    """How a turn went: the answer, who gave it, what it cost, or why it failed."""

    requested: str
    ok: bool = False
    text: str = ""
    model: str | None = None
    reason: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    searches: list[str] = field(default_factory=list)
    unavailable: str = ""  # why the requested model did not answer, when another did
    cut_off: bool = False  # part of a reply was shown and kept; `reason` says what failed
    tool_runs: list[ToolRun] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # a tool server failed, tools are off…

    @property
    def fell_back(self) -> bool:
        return self.model is not None and self.model != self.requested


class TurnOptions(TypedDict, total=False):
    """How `answer()` reports and asks as the turn goes, each optional."""

    on_delta: Callable[[str], None] | None  # each piece of the reply as it streams
    on_attempt: Callable[[Attempt], None] | None  # each model asked, and how it went
    policy: RetryPolicy | None
    now: datetime | None  # the time the system prompt gives
    tools: ToolBox | None  # the user's tool servers (only enabled ones are started)
    approve: Approve | None  # asks the user before a tool they have not allowed runs
    on_tool: Callable[[ToolRun], None] | None  # each tool call, once it ran or not


async def answer(
    session: LiveSession, catalog: Catalog, model: str, **options: Unpack[TurnOptions]
) -> Turn:
    """Answer the session's last message (the caller has journaled it, so nothing the user
    sent is lost whatever happens next) and journal the answer. A tool of the user's servers
    that they have not allowed runs only if `approve` says so (without it, it is declined)."""
    from catalog.llm import litellm

    turning = _Turning(session, catalog, model, options)
    try:
        await asyncio.to_thread(litellm)  # its first import takes seconds: not on this loop
        turning.toolbox = await _ready_tools(options.get("tools"), catalog, model, turning.turn)
        for _ in range(MAX_TOOL_ROUNDS):
            if await turning.ask():
                return turning.turn
        turning.turn.reason = "the model kept calling tools without answering"
        return turning.turn
    except asyncio.CancelledError:
        turning.keep_shown()
        raise


class _Turning:
    """A turn under way: what the user was shown of the reply, and each attempt, as they
    come; one request at a time, with the tool calls between."""

    def __init__(
        self, session: LiveSession, catalog: Catalog, model: str, options: TurnOptions
    ) -> None:
        self.session, self.catalog, self.model, self.options = session, catalog, model, options
        self.store = session.store
        self.turn = Turn(requested=model)
        self.shown: list[str] = []
        self.health = self.store.health()
        self.toolbox: ToolBox | None = None

    def delta(self, piece: str) -> None:
        self.shown.append(piece)
        on_delta = self.options.get("on_delta")
        if on_delta is not None:
            on_delta(piece)

    def attempt(self, record: Attempt) -> None:
        self.turn.attempts.append(record)
        failed = record.outcome.value not in ("ok", "cancelled")
        if failed and record.outcome.value != "skipped" and "".join(self.shown).strip():
            raise _CutOff
        if failed:
            self.shown.clear()
        on_attempt = self.options.get("on_attempt")
        if on_attempt is not None:
            on_attempt(record)

    def keep_shown(self) -> None:
        """What the user saw of a cancelled reply stays in the session (unless it was
        closed first)."""
        if self.shown and not self.session.journal.closed:
            turn = self.turn
            last = turn.attempts[-1].model if turn.attempts else self.model
            self.session.append(
                {"role": "assistant", "content": clean_text("".join(self.shown)), "model": last}
            )

    def system_prompt(self) -> str:
        """MEMORY.md and INSTRUCTIONS.md as they are now; one that cannot be read must not
        stop the conversation."""
        store = self.store
        try:
            memory_text = store.read_memory().text
        except OSError:
            memory_text = ""
        try:
            instructions = store.read_instructions().text
        except OSError:
            instructions = ""
        limit = store.settings.prompt_memory_chars
        now = self.options.get("now")
        return system_prompt(memory_text, limit=limit, now=now, instructions=instructions)

    def offered(self) -> list[dict[str, Any]]:
        """The user's tools offered this request (a notice said once, when some are off)."""
        if self.toolbox is None:
            return []
        offer = self.toolbox.offer()
        if offer.notice and offer.notice not in self.turn.notices:
            self.turn.notices.append(offer.notice)
        return offer.functions()

    async def ask(self) -> bool:
        """One request and what follows it: True once the turn is over (answered, cut off
        or failed), False when tool calls were answered and the model is asked again."""
        prompt = self.system_prompt()
        # Off the loop: a PDF's text may have to be read again from the data folder.
        context, chain, refused = await asyncio.to_thread(
            with_attachments, self.session, self.catalog, self.model
        )
        if refused is not None:
            self.attempt(refused)
            self.turn.reason = refused.reason
            return True
        try:
            result = await complete(
                self.catalog,
                self.model,
                [{"role": "system", "content": prompt}, *context],
                chain=chain,
                tools=[SEARCH_HISTORY_TOOL, *self.offered()],
                stream=True,
                accept=_not_empty,
                policy=self.options.get("policy"),
                on_delta=self.delta,
                on_attempt=self.attempt,
                health=self.health,
            )
        except _CutOff:
            self.cut_off()
            return True
        self.turn.cost += result.cost
        if not result.ok or result.reply is None:
            self.turn.reason = result.reason
            return True
        return await self.take(result.reply)

    def cut_off(self) -> None:
        """A reply broke off after part of it was shown: that part is kept, marked so."""
        turn = self.turn
        failed = turn.attempts[-1]
        turn.text, turn.cut_off, turn.model = clean_text("".join(self.shown)), True, failed.model
        turn.reason = failed.reason
        self.session.append(
            {"role": "assistant", "content": turn.text + CUT_OFF, "model": failed.model}
        )

    async def take(self, reply: Reply) -> bool:
        """A reply that came: the answer (True), or tool calls answered (False)."""
        turn = self.turn
        turn.prompt_tokens += reply.prompt_tokens
        turn.completion_tokens += reply.completion_tokens
        turn.model = reply.model
        if reply.model != self.model and not turn.unavailable:
            turn.unavailable = _why_unavailable(self.model, turn.attempts, self.health)
        # Each call with its tool, found once: a server that fails during an earlier call
        # of this reply leaves its later calls answered with why, never searched.
        toolbox = self.toolbox
        found = [(c, toolbox.find(c.name) if toolbox else None) for c in reply.tool_calls]
        calls = [(c, t) for c, t in found if c.name == "search_history" or t]
        if not calls:
            self.finish(reply)
            return True
        await self.run_calls(reply, calls)
        return False

    def finish(self, reply: Reply) -> None:
        """The answer, journaled with what the turn cost; one that stopped for room (not
        because it was done) is kept as cut off."""
        turn = self.turn
        turn.text = clean_text(reply.text)
        if reply.finish_reason == "length":
            turn.cut_off = True
            turn.reason = "it ran out of room for its reply (finish_reason: length)"
        self.session.append(
            {
                "role": "assistant",
                "content": turn.text + (CUT_OFF if turn.cut_off else ""),
                "model": reply.model,
                "tokens": turn.prompt_tokens + turn.completion_tokens,
                "cost": round(turn.cost, 8),
            }
        )
        turn.ok = not turn.cut_off

    async def run_calls(self, reply: Reply, calls: list[tuple[ToolCall, McpTool | None]]) -> None:
        """The reply's tool calls journaled, each run (or declined) and its result
        journaled as the tool's words."""
        session, turn, toolbox = self.session, self.turn, self.toolbox
        session.append(
            {
                "role": "assistant",
                "content": reply.text or None,
                "model": reply.model,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c, _ in calls
                ],
            }
        )
        self.shown.clear()
        for call, tool in calls:
            if tool is None or toolbox is None:  # search_history: the only tool of Kept's
                turn.searches.append(call.arguments)
                found = await asyncio.to_thread(
                    run_search_tool, self.store, call.arguments, exclude=(session.id,)
                )
            else:
                run = await _run_tool(
                    toolbox, tool, call.arguments, self.options.get("approve"), turn
                )
                found = run.result
                turn.tool_runs.append(run)
                on_tool = self.options.get("on_tool")
                if on_tool is not None:
                    on_tool(run)
            session.append(
                {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": found}
            )


async def _ready_tools(
    tools: ToolBox | None, catalog: Catalog, model: str, turn: Turn
) -> ToolBox | None:
    """The tool servers to offer this turn, enabled ones started (one notice for each that
    could not start); None when there are none, or the model cannot take tools (said)."""
    if not tools:
        return None
    from catalog.mcp_models import takes_tools, tools_off_sentence

    if not await asyncio.to_thread(takes_tools, catalog, model):
        turn.notices.append(tools_off_sentence(catalog, model))
        return None
    turn.notices += await tools.start_enabled()
    return tools


async def _run_tool(
    toolbox: ToolBox, tool: McpTool, arguments: str, approve: Approve | None, turn: Turn
) -> ToolRun:
    """Ask the user (unless they allowed this tool), then call it; a server's failure is a
    notice for the user and an error result for the model, never the end of the turn."""
    if toolbox.allowed(tool):
        choice = Approval.ONCE
    elif approve is None:
        choice = Approval.DENY
    else:
        choice = await approve(tool, arguments)
    if choice is Approval.DENY:
        return ToolRun(tool.server, tool.name, arguments, DECLINED, "declined")
    if choice is Approval.ALWAYS:
        toolbox.allow(tool)
    result = await toolbox.call(tool, arguments)
    if result.server_failed:
        turn.notices.append(f"{result.text.rstrip('.')}; the chat goes on without its tools.")
    return ToolRun(
        tool.server, tool.name, arguments, result.text, "failed" if result.error else "ran"
    )


def _why_unavailable(model: str, attempts: list[Attempt], health: HealthBook) -> str:
    """The requested model's last failure in this turn, or, when the walk did not even ask
    it (it is cooling down), what the health book says."""
    failed = [a for a in attempts if a.model == model and a.reason]
    if failed:
        return failed[-1].reason
    state = health.get(model)
    return "" if state.state is State.HEALTHY else state.describe()


def describe_search(arguments: str) -> str:
    try:
        return clean_text(str(json.loads(arguments).get("pattern", "")))
    except (ValueError, AttributeError):
        return ""
