"""The transport layer against the real fake provider: every fault, every format."""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import replace
from typing import Any

import pytest

from catalog import (
    Attempt,
    Catalog,
    Kind,
    ModelEntry,
    Outcome,
    Reply,
    ReplyRejected,
    Result,
    UnknownModelError,
    complete,
)
from catalog.config import CatalogConfig
from catalog.gateways import GATEWAYS
from catalog.keys import KeyStore
from tests.factories import entry
from tests.fakes.provider import (
    FakeProvider,
    Step,
    cut,
    error_event,
    hang,
    http_error,
    stall,
    text,
    tool_call,
    tool_use_failed,
)
from tests.support import FAKE_GATEWAYS, FAST_POLICY, fake_catalog, fake_keys

FORMATS = ("openai", "anthropic", "groq")
OTHER = {"openai": "anthropic", "anthropic": "openai", "groq": "anthropic"}
MESSAGES = [{"role": "user", "content": "Hello there"}]
SAVE_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "save_memory",
            "description": "Save memory",
            "parameters": {
                "type": "object",
                "properties": {
                    "history_entry": {"type": "string"},
                    "memory_update": {"type": "string"},
                },
                "required": ["history_entry", "memory_update"],
            },
        },
    }
]


def pair(fmt: str) -> tuple[ModelEntry, ...]:
    """primary on the format under test, backup on another gateway."""
    return (entry("primary", fmt, "backup"), entry("backup", OTHER[fmt]))


async def run(catalog: Catalog, model: str = "primary", **kwargs: Any) -> Result:
    kwargs.setdefault("policy", FAST_POLICY)
    return await complete(catalog, model, MESSAGES, **kwargs)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_healthy_model_answers_with_tokens_and_cost(
    fake: FakeProvider, fmt: str, stream: bool
) -> None:
    fake.script("primary", text("Hi, I am the primary."))
    deltas: list[str] = []
    result = await run(fake_catalog(fake, entries=pair(fmt)), stream=stream, on_delta=deltas.append)
    assert result.ok and not result.fell_back and result.reply is not None
    assert result.reply.text == "Hi, I am the primary."
    assert result.reply.gateway == fmt
    assert result.reply.prompt_tokens > 0 and result.reply.completion_tokens > 0
    assert result.reply.cost == pytest.approx(
        (result.reply.prompt_tokens * 1 + result.reply.completion_tokens * 2) / 1e6
    )
    assert [a.outcome for a in result.attempts] == [Outcome.OK]
    assert fake.count(model="primary") == 1 and fake.count(model="backup") == 0
    assert fake.requests[0].gateway == fmt
    assert fake.requests[0].stream is stream
    if stream:
        assert len(deltas) > 1 and "".join(deltas) == "Hi, I am the primary."


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
async def test_tool_calls_arrive_intact(fake: FakeProvider, fmt: str, stream: bool) -> None:
    args = {"history_entry": "Talked about Zürich — 日本語 too.", "memory_update": "# Me\n"}
    fake.script("primary", tool_call("save_memory", args))
    result = await run(
        fake_catalog(fake, entries=pair(fmt)),
        stream=stream,
        tools=SAVE_TOOL,
        tool_choice={"type": "function", "function": {"name": "save_memory"}},
    )
    assert result.ok and result.reply is not None
    (call,) = result.reply.tool_calls
    assert call.name == "save_memory"
    assert json.loads(call.arguments) == args
    sent = fake.requests[0].body
    assert "tools" in sent and "tool_choice" in sent


TRANSIENT_FAULTS = [
    (http_error(429), {Kind.RATE_LIMIT}),
    (http_error(500), {Kind.SERVER_ERROR}),
    (http_error(503), {Kind.SERVER_ERROR}),
    (http_error(504), {Kind.GATEWAY_TIMEOUT}),
    # litellm turns an OpenAI-format 524 into a Timeout without the status; Kept still
    # knows it for an upstream timeout.
    (http_error(524), {Kind.GATEWAY_TIMEOUT}),
    (http_error(529), {Kind.OVERLOADED}),
]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("fault", "kinds"), TRANSIENT_FAULTS, ids=lambda x: str(x))
async def test_transient_faults_are_retried_once_then_the_fallback_is_asked_once(
    fake: FakeProvider, fmt: str, stream: bool, fault: Step, kinds: set[Kind]
) -> None:
    fake.set_default("primary", fault)
    result = await run(fake_catalog(fake, entries=pair(fmt)), stream=stream)
    assert result.ok and result.fell_back and result.model == "backup"
    assert fake.count(model="primary") == 2  # a healthy backup follows: one short retry
    assert fake.count(model="backup") == 1
    outcomes = [(a.model, a.outcome) for a in result.attempts]
    assert outcomes == [
        ("primary", Outcome.RETRIED),
        ("primary", Outcome.FAILED),
        ("backup", Outcome.OK),
    ]
    assert {a.kind for a in result.attempts[:2]} <= kinds


@pytest.mark.parametrize(("fault", "kinds"), TRANSIENT_FAULTS, ids=lambda x: str(x))
async def test_the_last_model_of_the_walk_gets_the_full_backoff(
    fake: FakeProvider, fault: Step, kinds: set[Kind]
) -> None:
    fake.set_default("primary", fault)
    result = await run(fake_catalog(fake, entries=pair("openai")), walk_chain=False)
    assert not result.ok
    assert fake.count(model="primary") == 4  # the first try and three retries
    assert [a.outcome for a in result.attempts] == [Outcome.RETRIED] * 3 + [Outcome.FAILED]
    assert {a.kind for a in result.attempts} <= kinds


async def test_the_short_retry_waits_at_most_the_short_backoff(fake: FakeProvider) -> None:
    fake.set_default("primary", http_error(500))
    policy = replace(FAST_POLICY, backoff=30.0, max_backoff=30.0, short_backoff=0.2)
    result = await run(fake_catalog(fake, entries=pair("openai")), policy=policy)
    assert result.ok and result.model == "backup"
    first, second = [r.time for r in fake.requests if r.model == "primary"]
    assert 0.2 <= second - first < 10


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_transient_fault_that_clears_is_answered_by_the_primary(
    fake: FakeProvider, fmt: str
) -> None:
    fake.script("primary", http_error(500), text("finally"))
    result = await run(fake_catalog(fake, entries=pair(fmt)))
    assert result.ok and result.model == "primary"
    assert result.reply is not None and result.reply.text == "finally"
    assert fake.count(model="primary") == 2 and fake.count(model="backup") == 0


MODEL_LEVEL_FAULTS = [
    (error_event(), Kind.STREAM_DIED),
    (cut(), Kind.STREAM_DIED),
    (stall(), Kind.STALLED),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("fault", "kind"), MODEL_LEVEL_FAULTS, ids=lambda x: str(x))
async def test_a_stream_that_dies_midway_moves_straight_to_the_next_model(
    fake: FakeProvider, fmt: str, fault: Step, kind: Kind
) -> None:
    fake.set_default("primary", fault)
    attempts: list[Attempt] = []
    deltas: list[str] = []
    # Far above a healthy chunk's gap on a busy machine; only the stalled stream meets it.
    policy = replace(FAST_POLICY, stall_timeout=5.0)
    result = await run(
        fake_catalog(fake, entries=pair(fmt)),
        stream=True,
        policy=policy,
        on_attempt=attempts.append,
        on_delta=deltas.append,
    )
    assert result.ok and result.model == "backup"
    assert fake.count(model="primary") == 1 and fake.count(model="backup") == 1
    assert [(a.model, a.outcome, a.kind) for a in attempts] == [
        ("primary", Outcome.FAILED, kind),
        ("backup", Outcome.OK, None),
    ]
    # The partial text of the dead stream was shown, then the backup's answer.
    assert result.reply is not None and "".join(deltas).endswith(result.reply.text)


@pytest.mark.parametrize("fmt", ["openai", "groq"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_a_failed_function_call_is_not_retried(
    fake: FakeProvider, fmt: str, stream: bool
) -> None:
    fake.set_default("primary", tool_use_failed())
    result = await run(fake_catalog(fake, entries=pair(fmt)), stream=stream, tools=SAVE_TOOL)
    assert result.ok and result.model == "backup"
    assert fake.count(model="primary") == 1
    assert result.attempts[0].kind is Kind.TOOL_CALL_FAILED


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
async def test_no_answer_hits_the_deadline_and_the_walk_goes_on(
    fake: FakeProvider, fmt: str, stream: bool
) -> None:
    fake.set_default("primary", hang())
    # Only the model that never answers has a short deadline of its own: the backup keeps the
    # policy's, far above its work on a busy machine.
    primary, backup = pair(fmt)
    entries = (replace(primary, deadline=0.5), backup)
    result = await run(fake_catalog(fake, entries=entries), stream=stream)
    assert result.ok and result.model == "backup"
    assert fake.count(model="primary") == 1
    assert result.attempts[0].kind in (Kind.DEADLINE, Kind.STALLED)
    assert result.attempts[0].outcome is Outcome.FAILED


@pytest.mark.parametrize("fmt", FORMATS)
async def test_an_auth_failure_writes_off_the_gateway_for_the_rest_of_the_walk(
    fake: FakeProvider, fmt: str
) -> None:
    entries = (
        entry("primary", fmt, "sibling"),
        entry("sibling", fmt, "backup"),
        entry("backup", OTHER[fmt]),
    )
    fake.set_default("primary", http_error(401))
    result = await run(fake_catalog(fake, entries=entries))
    assert result.ok and result.model == "backup"
    assert fake.count(model="primary") == 1  # never retried
    assert fake.count(model="sibling") == 0  # same gateway: skipped without a request
    kinds = [(a.model, a.outcome, a.kind) for a in result.attempts]
    assert kinds == [
        ("primary", Outcome.FAILED, Kind.AUTH),
        ("sibling", Outcome.SKIPPED, Kind.GATEWAY_DOWN),
        ("backup", Outcome.OK, None),
    ]
    # Each reason names the gateway whose key was refused; what to do is the app's to say.
    label = GATEWAYS[fmt].label
    assert [a.reason for a in result.attempts[:2]] == [
        f"the {label} key was refused",
        f"the {fmt} key was refused earlier in this walk",
    ]


async def test_a_gateway_without_a_key_is_skipped_without_a_request(fake: FakeProvider) -> None:
    catalog = fake_catalog(fake, env=fake_keys(without=("groq",)))
    result = await run(catalog, "llama-3.3-70b-versatile")
    assert result.ok and result.model == "gpt-4.1-mini"
    assert fake.count(gateway="groq") == 0
    skipped = result.attempts[:3]
    assert [a.model for a in skipped] == [
        "llama-3.3-70b-versatile",
        "qwen3-32b",
        "llama-4-scout-17b-16e-instruct",
    ]
    assert all(a.outcome is Outcome.SKIPPED and a.kind is Kind.NO_KEY for a in skipped)
    assert "GROQ_API_KEY" in skipped[0].reason


async def test_the_consolidation_chain_walks_each_gateway_in_its_own_format(
    fake: FakeProvider,
) -> None:
    for model in (
        "llama-3.3-70b-versatile",
        "qwen/qwen3-32b",
        "meta-llama/llama-4-scout-17b-16e-instruct",
        "gpt-4.1-mini",
    ):
        fake.set_default(model, http_error(500))
    result = await run(fake_catalog(fake), "llama-3.3-70b-versatile")
    assert result.ok and result.model == "claude-haiku-4-5"
    assert [(r.gateway, r.model) for r in fake.requests] == (
        [("groq", "llama-3.3-70b-versatile")] * 2
        + [
            ("groq", "qwen/qwen3-32b"),
            ("groq", "meta-llama/llama-4-scout-17b-16e-instruct"),
            ("openai", "gpt-4.1-mini"),
            ("anthropic", "claude-haiku-4-5"),
        ]
    )


async def test_a_cycle_of_failing_models_ends_with_a_result_not_a_loop(fake: FakeProvider) -> None:
    entries = (entry("a", "openai", "b"), entry("b", "anthropic", "a"))
    fake.set_default("a", http_error(500))
    fake.set_default("b", http_error(500))
    result = await run(fake_catalog(fake, entries=entries), "a")
    assert not result.ok and result.reply is None
    assert fake.count(model="a") == 2 and fake.count(model="b") == 4  # b is the last resort
    assert "b falls back to a, already in the chain" in result.reason
    assert "server error" in result.reason


async def test_a_rejected_answer_moves_on_and_resumes_after_the_model_that_answered(
    fake: FakeProvider,
) -> None:
    fake.set_default("primary", text("Here is a summary in prose."))
    fake.script("backup", tool_call("save_memory", {"history_entry": "x", "memory_update": ""}))

    def accept(reply: Reply) -> str:
        if not reply.tool_calls:
            raise ReplyRejected("did not call save_memory")
        return reply.tool_calls[0].name

    result = await run(fake_catalog(fake, entries=pair("groq")), accept=accept, tools=SAVE_TOOL)
    assert result.ok and result.model == "backup" and result.value == "save_memory"
    assert fake.count(model="primary") == 1  # an answer that missed is not retried
    assert [(a.outcome, a.reason) for a in result.attempts] == [
        (Outcome.REJECTED, "did not call save_memory"),
        (Outcome.OK, ""),
    ]
    assert result.attempts[0].prompt_tokens > 0  # it was paid for, and it shows


@pytest.mark.parametrize("fmt", FORMATS)
async def test_retry_after_is_honoured_when_there_is_nowhere_else_to_go(
    fake: FakeProvider, fmt: str
) -> None:
    fake.script("primary", http_error(429, retry_after=0.3), text("ok"))
    policy = replace(FAST_POLICY, retry_after_cap=10.0)
    result = await run(fake_catalog(fake, entries=pair(fmt)), policy=policy, walk_chain=False)
    assert result.ok and result.model == "primary"
    first, second = [r.time for r in fake.requests]
    assert second - first >= 0.3


async def test_a_long_retry_after_is_capped(fake: FakeProvider) -> None:
    fake.script("primary", http_error(429, retry_after=3600), text("ok"))
    policy = replace(FAST_POLICY, retry_after_cap=0.2)
    catalog = fake_catalog(fake, entries=pair("openai"))

    # Far above the capped 0.2 s pause, far below the hour the header asks for.
    async with asyncio.timeout(30):
        result = await complete(catalog, "primary", MESSAGES, policy=policy, walk_chain=False)
    assert result.ok and result.model == "primary"
    first, second = [r.time for r in fake.requests]
    assert second - first >= 0.2  # it did wait: the cap, not the header, set the pause


async def test_cancellation_stops_at_once_without_fallback(fake: FakeProvider) -> None:
    fake.set_default("primary", hang())
    attempts: list[Attempt] = []

    task = asyncio.create_task(
        complete(
            fake_catalog(fake, entries=pair("openai")),
            "primary",
            MESSAGES,
            policy=FAST_POLICY,
            on_attempt=attempts.append,
        )
    )
    assert await asyncio.to_thread(fake.wait_for_requests, 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake.count(model="backup") == 0
    assert [(a.outcome, a.kind) for a in attempts] == [(Outcome.CANCELLED, Kind.CANCELLED)]


async def test_a_refused_connection_is_retried_then_the_fallback_answers(
    fake: FakeProvider,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    urls = {name: fake.base_url(name) for name in FAKE_GATEWAYS}
    urls["openai"] = f"http://127.0.0.1:{dead_port}/v1"
    catalog = Catalog(
        pair("openai"), CatalogConfig(gateway_urls=urls), KeyStore(environ=fake_keys())
    )
    result = await run(catalog)
    assert result.ok and result.model == "backup"
    assert [a.kind for a in result.attempts[:2]] == [Kind.CONNECTION] * 2
    assert "could not connect" in result.attempts[0].reason


@pytest.mark.parametrize("fmt", FORMATS)
async def test_no_key_ever_appears_in_records_or_reasons(fake: FakeProvider, fmt: str) -> None:
    keys = fake_keys()
    secret = keys[
        {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "groq": "GROQ_API_KEY"}[fmt]
    ]
    fake.set_default("primary", http_error(500, message=f"upstream echoed key {secret}"))
    fake.set_default("backup", http_error(401, message=f"Incorrect API key provided: {secret}"))
    result = await run(fake_catalog(fake, entries=pair(fmt), env=keys))
    assert not result.ok
    assert fake.requests[0].headers  # the key was really sent
    everything = repr(result) + result.reason + json.dumps([a.to_dict() for a in result.attempts])
    assert secret not in everything
    assert secret[:12] not in everything


async def test_an_unknown_model_is_an_error_not_a_request(fake: FakeProvider) -> None:
    with pytest.raises(UnknownModelError, match="Unknown model 'nope'"):
        await run(fake_catalog(fake), "nope")
    assert fake.requests == []


def test_an_attempt_read_back_from_its_log_line_is_the_same_record() -> None:
    attempt = Attempt(
        "primary",
        "openai",
        Outcome.RETRIED,
        Kind.RATE_LIMIT,
        429,
        0.25,
        12,
        3,
        0.0004,
        "rate limited: slow down",
        started=1_790_000_000.125,
    )
    line = json.loads(json.dumps(attempt.to_dict()))
    assert Attempt.from_dict(line) == attempt
    ok = Attempt("backup", "anthropic", Outcome.OK, started=1_790_000_000.5)
    assert Attempt.from_dict(ok.to_dict()) == ok
    with pytest.raises(ValueError, match="not an attempt record"):
        Attempt.from_dict({**line, "outcome": "exploded"})
    with pytest.raises(ValueError, match="not an attempt record"):
        Attempt.from_dict({"model": "primary"})
