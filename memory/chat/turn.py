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
from typing import TYPE_CHECKING, Any

from catalog import Attempt, Catalog, Kind, Outcome, Reply, ReplyRejected, RetryPolicy, complete
from catalog.catalog import Chain
from catalog.health import HealthBook, State
from catalog.models import short_label
from memory.chat.attachments import can_take, expand, kinds_of, vision_model_sentence
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


async def answer(
    session: LiveSession,
    catalog: Catalog,
    model: str,
    *,
    on_delta: Callable[[str], None] | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    policy: RetryPolicy | None = None,
    now: datetime | None = None,
    tools: ToolBox | None = None,
    approve: Approve | None = None,
    on_tool: Callable[[ToolRun], None] | None = None,
) -> Turn:
    """Answer the session's last message (the caller has journaled it, so nothing the user
    sent is lost whatever happens next) and journal the answer. `tools` are the user's tool
    servers (only enabled ones are started and offered); `approve` asks the user before a
    tool they have not allowed runs (without it, such a call is declined)."""
    from catalog.llm import litellm

    store = session.store
    turn = Turn(requested=model)
    shown: list[str] = []

    def delta(piece: str) -> None:
        shown.append(piece)
        if on_delta is not None:
            on_delta(piece)

    def attempt(record: Attempt) -> None:
        turn.attempts.append(record)
        if record.outcome.value not in ("ok", "cancelled", "skipped") and "".join(shown).strip():
            raise _CutOff
        if record.outcome.value not in ("ok", "cancelled"):
            shown.clear()
        if on_attempt is not None:
            on_attempt(record)

    health = store.health()
    try:
        await asyncio.to_thread(litellm)  # its first import takes seconds: not on this loop
        toolbox = await _ready_tools(tools, catalog, model, turn)
        for _ in range(MAX_TOOL_ROUNDS):
            try:
                memory_text = store.read_memory().text
            except OSError:
                memory_text = ""  # an unreadable MEMORY.md must not stop the conversation
            try:
                instructions = store.read_instructions().text
            except OSError:
                instructions = ""
            prompt = system_prompt(
                memory_text,
                limit=store.settings.prompt_memory_chars,
                now=now,
                instructions=instructions,
            )
            # Off the loop: a PDF's text may have to be read again from the data folder.
            context, chain, refused = await asyncio.to_thread(
                _with_attachments, session, catalog, model
            )
            if refused is not None:
                attempt(refused)
                turn.reason = refused.reason
                return turn
            messages = [{"role": "system", "content": prompt}, *context]
            offered: list[dict[str, Any]] = []
            if toolbox is not None:
                offer = toolbox.offer()
                offered = offer.functions()
                if offer.notice and offer.notice not in turn.notices:
                    turn.notices.append(offer.notice)
            try:
                result = await complete(
                    catalog,
                    model,
                    messages,
                    chain=chain,
                    tools=[SEARCH_HISTORY_TOOL, *offered],
                    stream=True,
                    accept=_not_empty,
                    policy=policy,
                    on_delta=delta,
                    on_attempt=attempt,
                    health=health,
                )
            except _CutOff:
                failed = turn.attempts[-1]
                turn.text, turn.cut_off, turn.model = clean_text("".join(shown)), True, failed.model
                turn.reason = failed.reason
                session.append(
                    {"role": "assistant", "content": turn.text + CUT_OFF, "model": failed.model}
                )
                return turn
            turn.cost += result.cost
            if not result.ok or result.reply is None:
                turn.reason = result.reason
                return turn
            reply = result.reply
            turn.prompt_tokens += reply.prompt_tokens
            turn.completion_tokens += reply.completion_tokens
            turn.model = reply.model
            if reply.model != model and not turn.unavailable:
                turn.unavailable = _why_unavailable(model, turn.attempts, health)
            # Each call with its tool, found once: a server that fails during an earlier
            # call of this reply leaves its later calls answered with why, never searched.
            found_tools = [(c, toolbox.find(c.name) if toolbox else None) for c in reply.tool_calls]
            calls = [(c, t) for c, t in found_tools if c.name == "search_history" or t]
            if not calls:
                turn.text = clean_text(reply.text)
                if reply.finish_reason == "length":  # it stopped for room, not because done
                    turn.cut_off = True
                    turn.reason = "it ran out of room for its reply (finish_reason: length)"
                session.append(
                    {
                        "role": "assistant",
                        "content": turn.text + (CUT_OFF if turn.cut_off else ""),
                        "model": reply.model,
                        "tokens": turn.prompt_tokens + turn.completion_tokens,
                        "cost": round(turn.cost, 8),
                    }
                )
                turn.ok = not turn.cut_off
                return turn
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
            shown.clear()
            for call, tool in calls:
                if tool is None or toolbox is None:  # search_history: the only tool of Kept's
                    turn.searches.append(call.arguments)
                    found = await asyncio.to_thread(
                        run_search_tool, store, call.arguments, exclude=(session.id,)
                    )
                else:
                    run = await _run_tool(toolbox, tool, call.arguments, approve, turn)
                    found = run.result
                    turn.tool_runs.append(run)
                    if on_tool is not None:
                        on_tool(run)
                session.append(
                    {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": found}
                )
        turn.reason = "the model kept calling tools without answering"
        return turn
    except asyncio.CancelledError:
        # What the user saw of the reply stays in the session (unless it was closed first).
        if shown and not session.journal.closed:
            last = turn.attempts[-1].model if turn.attempts else model
            session.append(
                {"role": "assistant", "content": clean_text("".join(shown)), "model": last}
            )
        raise


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


def _with_attachments(
    session: LiveSession, catalog: Catalog, model: str
) -> tuple[list[dict[str, Any]], Chain | None, Attempt | None]:
    """The context with each message's attachments as content parts, and the chain that can
    take them: with an image in the window, fallbacks that cannot see are left out. A model
    that cannot see the image of the message it answers is not asked (an Attempt says why,
    once, rather than each model of the chain failing on it); older images it is shown as
    mentions."""
    context = session.context()
    journaled = [m for m in session.live_messages() if m.get("role") != "system"]
    if len(journaled) != len(context) or not kinds_of(journaled):
        return context, None, None
    chain = None
    sees = True
    if "image" in kinds_of(journaled):
        sees = can_take(model, {"image"}, catalog)
        last: dict[str, Any] = next((m for m in reversed(journaled) if m.get("role") == "user"), {})
        if not sees and "image" in kinds_of([last]):
            label = catalog.get(model).label if model in catalog else model
            gateway = catalog.get(model).gateway if model in catalog else ""
            reason = vision_model_sentence(catalog, model).removeprefix(f"{label} ")
            return (
                context,
                None,
                Attempt(model, gateway, Outcome.SKIPPED, Kind.BAD_REQUEST, reason=reason),
            )
        if sees:
            whole = catalog.chain(model)
            chain = Chain(
                tuple(m for m in whole.models if can_take(m.id, {"image"}, catalog)),
                f"{whole.end}; models that cannot see images are left out",
            )
    expanded = [
        expand(session.store, source, sent, images=sees)
        for source, sent in zip(journaled, context, strict=True)
    ]
    return expanded, chain, None


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


def _shorten(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a word with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def failure_notice(catalog: Catalog, requested: str, attempts: list[Attempt]) -> str:
    """A failed turn in three short lines: what failed, why (reasons grouped, each gateway
    named once), and the one next step. Each attempt's own words stay in the records."""
    from catalog import Kind

    last: dict[str, Attempt] = {}
    for record in attempts:
        last[record.model] = record
    no_key: list[str] = []
    refused: list[str] = []
    unreachable: list[str] = []
    other: list[str] = []

    def add(group: list[str], item: str) -> None:
        if item not in group:
            group.append(item)

    for record in last.values():
        gateway = catalog.gateways.get(record.gateway)
        label = gateway.label if gateway else record.gateway
        if record.kind is Kind.NO_KEY:
            add(no_key, label)
        elif record.kind in (Kind.AUTH, Kind.GATEWAY_DOWN):
            add(refused, label)
        elif record.kind is Kind.CONNECTION:
            url = (
                catalog.route(catalog.get(record.model)).api_base
                if record.model in catalog
                else None
            )
            add(unreachable, url or label)
        else:
            model = (
                catalog.get(record.model).label
                if record.model in catalog
                else short_label(record.model)
            )
            add(other, f"{_shorten(model, 40)} {_shorten(record.reason.rstrip('.'), 160)}")
    why = [f"no key for {', '.join(no_key)}"] if no_key else []
    if refused:
        why.append(f"the key was refused by {', '.join(refused)}")
    if unreachable:
        why.append(f"nothing answers at {', '.join(unreachable)}")
    why += other[:2] + (["…"] if len(other) > 2 else [])
    first = last.get(requested)
    label = catalog.get(requested).label if requested in catalog else requested
    keyless = first is not None and first.kind is Kind.CONNECTION
    if keyless and requested in catalog:
        keyless = not catalog.route(catalog.get(requested)).gateway.needs_key
    if keyless:
        step = (
            f"Start the server at {unreachable[0]} (or fix its address in config.toml), "
            "or pick another model with /model."
        )
    elif no_key or refused:
        step = "Add or fix a key with /keys, or pick another model with /model."
    else:
        step = "Send it again in a moment, or pick another model with /model."
    return (
        f"No model could answer for {label}; your message is saved.\n"
        f"Why: {'; '.join(why) or 'no model in its chain could be tried'}.\n"
        f"Next: {step}"
    )
