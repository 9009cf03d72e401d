"""The transport layer: call a model through litellm and survive provider failures.

The walk asks each model of the chain in turn, each through its own gateway. A transient
error (rate limit, 5xx, 524, 529, connection) is retried with backoff only where there is
nowhere else to go: while a healthy model follows, the head gets one short retry and the
others none, and a Retry-After becomes the model's cooldown rather than a sleep; the last
model of the walk gets the full backoff. Model-level failures (a stream that died, a
failed tool call, a missed deadline, a stalled stream) go straight to the next model. An
auth failure writes its gateway off for the rest of the walk. Every try becomes an
`Attempt`.

Given a `HealthBook` (catalog.health), the walk also learns across walks and processes:
cooling models go last, a refused key is not sent again, and a deadline follows the
model's observed latency (a stream's first token likewise).

A caller may pass `accept`, which inspects a reply and raises `ReplyRejected` when the
answer does not do the job; the walk then goes on from the model that answered, sharing
one visited set with the transport's own failures.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from typing import Any

from catalog import health as health_module
from catalog.catalog import Catalog, Chain, Route
from catalog.config import TRANSPORT_DEFAULTS as _D
from catalog.health import HealthBook
from catalog.hedge import LOST, race
from catalog.llm import litellm
from catalog.sanitize import clean_text
from catalog.structured import (
    DoesNotFit,
    fit_max_tokens,
    refused_dialect,
    response_format,
    structured_dialect,
)


class Kind(StrEnum):
    """Why an attempt did not produce an accepted answer."""

    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    OVERLOADED = "overloaded"
    GATEWAY_TIMEOUT = "gateway_timeout"
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    DEADLINE = "deadline"
    STALLED = "stalled"
    STREAM_DIED = "stream_died"
    TOOL_CALL_FAILED = "tool_call_failed"
    AUTH = "auth"
    BAD_REQUEST = "bad_request"
    NOT_FOUND = "not_found"
    CONTEXT_WINDOW = "context_window"
    NO_KEY = "no_key"
    GATEWAY_DOWN = "gateway_down"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    LATE = "late"  # cancelled: the other model of a hedge answered first
    UNKNOWN = "unknown"


TRANSIENT = frozenset(
    {
        Kind.RATE_LIMIT,
        Kind.SERVER_ERROR,
        Kind.OVERLOADED,
        Kind.GATEWAY_TIMEOUT,
        Kind.CONNECTION,
        Kind.TIMEOUT,
    }
)


class Outcome(StrEnum):
    OK = "ok"  # answered and accepted
    RETRIED = "retried"  # failed; the same model is tried again after a backoff
    FAILED = "failed"  # failed; the walk moves on to the next model
    REJECTED = "rejected"  # answered, but the answer did not do the job
    SKIPPED = "skipped"  # no request was made (no key, gateway written off)
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Tests shrink every figure; users may set them in config.toml."""

    # Defaults and bounds of the seven figures config.toml may set: catalog.config.
    retries: int = _D.retries  # extra tries of the walk's last model on transient errors
    backoff: float = _D.backoff  # first delay; doubles each retry (1 s, 2 s, 4 s)
    short_backoff: float = _D.short_backoff  # the head's one retry before a healthy model
    max_backoff: float = _D.max_backoff
    retry_after_cap: float = _D.retry_after_cap  # a Retry-After longer than this is cut
    attempt_deadline: float = _D.attempt_deadline  # one request, stream included
    stall_timeout: float = _D.stall_timeout  # longest silence between stream chunks
    first_token: float | None = None  # a stream's first chunk (None: stall_timeout)
    retry_on: frozenset[Kind] = TRANSIENT

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        delay = min(self.backoff * (2**retry), self.max_backoff)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_cap))
        return delay

    @classmethod
    def from_config(cls, values: dict[str, float | int], **overrides: Any) -> RetryPolicy:
        return replace(cls(), **{**values, **overrides})


def for_model(policy: RetryPolicy, deadline: float | None) -> RetryPolicy:
    """The policy for one model: its own `deadline` ([[models]]) replaces every other cap,
    so a slow CPU model may stay silent while it reads a long prompt."""
    if deadline is None:
        return policy
    return replace(
        policy, attempt_deadline=deadline, stall_timeout=max(policy.stall_timeout, deadline)
    )


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # as the model sent it: may be invalid JSON; the caller validates


@dataclass(frozen=True)
class Reply:
    """A model's answer, before any business check."""

    model: str
    gateway: str
    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cost: float


@dataclass(frozen=True)
class Attempt:
    """One try at one model: what happened and what it cost."""

    model: str
    gateway: str
    outcome: Outcome
    kind: Kind | None = None
    status: int | None = None
    latency: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    reason: str = ""
    started: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": datetime.fromtimestamp(self.started, UTC).isoformat(timespec="milliseconds"),
            "model": self.model,
            "gateway": self.gateway,
            "outcome": self.outcome.value,
            "kind": self.kind.value if self.kind else None,
            "status": self.status,
            "latency": round(self.latency, 4),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Result:
    """The walk's verdict: an accepted reply, or why every model in the chain failed."""

    requested: str
    reply: Reply | None
    value: Any
    attempts: tuple[Attempt, ...]
    reason: str

    @property
    def ok(self) -> bool:
        return self.reply is not None

    @property
    def model(self) -> str | None:
        return self.reply.model if self.reply else None

    @property
    def fell_back(self) -> bool:
        return self.reply is not None and self.reply.model != self.requested

    @property
    def cost(self) -> float:
        return sum(a.cost for a in self.attempts)


class ReplyRejected(Exception):
    """Raised by an `accept` callback: the reply arrived but does not do the job.

    `kind` is CONTEXT_WINDOW when the reply was cut off by the model's context, so that
    the caller can try again with a smaller request."""

    def __init__(self, reason: str, kind: Kind = Kind.REJECTED) -> None:
        super().__init__(reason)
        self.kind = kind


class _Stalled(Exception):
    pass


class _Failure(Exception):
    """An attempt that failed, classified."""

    def __init__(
        self, kind: Kind, reason: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.status, self.retry_after = kind, reason, status, retry_after


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header, wherever litellm kept it for this provider."""
    value = None
    sources = (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    )
    for headers in sources:
        if headers:
            lowered = {str(k).lower(): v for k, v in dict(headers).items()}
            value = lowered.get("retry-after")
            if value is not None:
                break
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_PREFIXES = re.compile(
    r"^(?:litellm\.\w+:\s*|\w+Error:\s*|\w+Exception\s*-\s*|"
    r"\w+Exception Timeout\s*-\s*)+"
)


def provider_message(exc: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes or JSON wrapping."""
    text = _PREFIXES.sub("", str(getattr(exc, "message", None) or exc)).strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return text


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CONNECTION_WORDS = (
    "connection error",
    "cannot connect",
    "connect call failed",
    "connection refused",
    "name or service not known",
    "server disconnected",
)


def _connection_failed(exc: BaseException, lowered: str) -> bool:
    """True when no HTTP answer came at all (refused, DNS, reset): litellm says 500."""
    if any(word in lowered for word in _CONNECTION_WORDS):
        return True
    seen: BaseException | None = exc
    for _ in range(8):
        seen = seen.__cause__ or seen.__context__ if seen else None
        if seen is None:
            return False
        if (
            isinstance(seen, ConnectionError)
            or "ConnectError" in type(seen).__name__
            or "ClientConnectorError" in type(seen).__name__
        ):
            return True
    return False


def classify(exc: BaseException) -> _Failure:
    """Map a litellm exception to a failure kind (transient or model-level)."""
    import litellm.exceptions as le

    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    raw = str(getattr(exc, "message", None) or exc)
    message = _one_line(provider_message(exc))
    lowered = raw.lower()
    if isinstance(exc, le.MidStreamFallbackError):
        if isinstance(getattr(exc, "original_exception", None), le.Timeout):
            return _Failure(Kind.STALLED, "the stream stalled midway", status)
        return _Failure(Kind.STREAM_DIED, f"the stream broke off midway: {message}", status)
    if isinstance(exc, le.AuthenticationError | le.PermissionDeniedError):
        return _Failure(Kind.AUTH, "the key was refused", status)
    if isinstance(exc, le.RateLimitError):
        return _Failure(Kind.RATE_LIMIT, f"rate limited: {message}", status, _retry_after(exc))
    if isinstance(exc, le.ContextWindowExceededError):
        return _Failure(Kind.CONTEXT_WINDOW, "the conversation is too long for this model", status)
    if isinstance(exc, le.BadRequestError):
        body = getattr(exc, "body", None)
        code = body.get("code") if isinstance(body, dict) else None
        if (
            code == "tool_use_failed"
            or "tool_use_failed" in lowered
            or "failed to call a function" in lowered
        ):
            return _Failure(Kind.TOOL_CALL_FAILED, "the model failed to call the tool", status)
        return _Failure(Kind.BAD_REQUEST, f"request refused: {message}", status)
    if isinstance(exc, le.NotFoundError):
        return _Failure(Kind.NOT_FOUND, f"not found: {message}", status)
    if isinstance(exc, le.Timeout):
        # litellm reports an upstream 504, and an OpenAI-format 524 (Cloudflare's page says
        # "A timeout occurred"), as a Timeout with status 408.
        if status in (504, 524) or "a timeout occurred" in lowered or "error code 524" in lowered:
            return _Failure(
                Kind.GATEWAY_TIMEOUT,
                "upstream timed out (524)" if status != 504 else "upstream timed out (504)",
                status,
            )
        return _Failure(Kind.TIMEOUT, "no answer in time", status)
    if _connection_failed(exc, lowered):
        return _Failure(Kind.CONNECTION, f"could not connect: {message}", None)
    if isinstance(
        exc,
        le.APIError | le.InternalServerError | le.ServiceUnavailableError | le.APIConnectionError,
    ):
        if status == 529 or "overloaded" in lowered:
            return _Failure(
                Kind.OVERLOADED, "the provider is overloaded", status, _retry_after(exc)
            )
        if status in (504, 524):
            return _Failure(Kind.GATEWAY_TIMEOUT, f"upstream timed out ({status})", status)
        return _Failure(Kind.SERVER_ERROR, f"server error: {message}", status, _retry_after(exc))
    return _Failure(Kind.UNKNOWN, f"{type(exc).__name__}: {message}", status)


class _Secrets(list[str]):
    """Every key Kept knows, for redaction; shown as hidden in any traceback."""

    def __repr__(self) -> str:
        return f"<{len(self)} keys hidden>"


def redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


EventHook = Callable[[Attempt], None]
DeltaHook = Callable[[str], None]
Accept = Callable[[Reply], Any]


def _usage(response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0
    return int(getattr(usage, "prompt_tokens", 0) or 0), int(
        getattr(usage, "completion_tokens", 0) or 0
    )


def _to_reply(response: Any, route: Route, catalog: Catalog) -> Reply:
    choice = response.choices[0]
    message = choice.message
    calls = tuple(
        ToolCall(
            id=str(getattr(call, "id", "") or ""),
            name=str(call.function.name or ""),
            arguments=call.function.arguments
            if isinstance(call.function.arguments, str)
            else json.dumps(call.function.arguments),
        )
        for call in (getattr(message, "tool_calls", None) or ())
    )
    prompt, completion = _usage(response)
    return _reply(
        route,
        catalog,
        message.content or "",
        calls,
        getattr(choice, "finish_reason", None),
        prompt,
        completion,
    )


def _reply(
    route: Route,
    catalog: Catalog,
    text: str,
    calls: tuple[ToolCall, ...],
    finish_reason: str | None,
    prompt: int,
    completion: int,
) -> Reply:
    """A Reply priced from the catalog (litellm's map, or the entry's own figures)."""
    pricing = catalog.pricing(route.entry)
    # Where a model's words enter Kept: no escape sequence gets further than this.
    calls = tuple(
        replace(c, name=clean_text(c.name), id=clean_text(c.id), arguments=clean_text(c.arguments))
        for c in calls
    )
    return Reply(
        model=route.entry.id,
        gateway=route.gateway.name,
        text=clean_text(text),
        tool_calls=calls,
        finish_reason=finish_reason,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=pricing.cost(prompt, completion) if pricing else 0.0,
    )


async def _request(
    route: Route,
    catalog: Catalog,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None,
    tool_choice: Any,
    stream: bool,
    policy: RetryPolicy,
    on_delta: DeltaHook | None,
    max_tokens: int | None = None,
    schema: dict[str, Any] | None = None,
) -> Reply:
    llm = litellm()
    kwargs: dict[str, Any] = {
        "model": route.litellm_model,
        "messages": messages,
        "api_key": route.key.value,
        "max_retries": 0,
        # Parameters a provider does not take (tool_choice on o3, ...) are left out.
        "drop_params": True,
        # litellm's timeout is per phase; ours (deadline, stall) must fire first.
        "timeout": (policy.stall_timeout if stream else policy.attempt_deadline) + 1.0,
    }
    if route.api_base:
        kwargs["api_base"] = route.api_base
    max_tokens = fit_max_tokens(catalog, route, messages, max_tokens)
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    dialect = structured_dialect(route, schema)
    if dialect is not None and schema is not None:
        kwargs["response_format"] = response_format(dialect, schema)
        # With drop_params litellm answers a 422 by dropping the parameters the server named
        # and asking again: the reply would come back unconstrained, not in another dialect.
        kwargs["drop_params"] = False
    elif tools:
        kwargs["tools"] = tools
        if tool_choice is not None and route.entry.supports_tool_choice:
            kwargs["tool_choice"] = tool_choice
    if stream:
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
    first_token = policy.first_token or policy.stall_timeout
    try:
        # A stream's headers and first chunk must come within the first-token deadline.
        async with asyncio.timeout(policy.first_token if stream else None) as waiting:
            response = await llm.acompletion(**kwargs)
    except Exception as exc:
        if stream and waiting.expired():
            raise _Failure(Kind.DEADLINE, f"no first token within {first_token:g} s") from None
        if dialect is None or not refused_dialect(route, dialect, exc):
            raise
        # This server speaks another dialect of structured output: ask again in it.
        return await _request(
            route,
            catalog,
            messages,
            tools=tools,
            tool_choice=tool_choice,
            stream=stream,
            policy=policy,
            on_delta=on_delta,
            max_tokens=max_tokens,
            schema=schema,
        )
    if not stream:
        return _to_reply(response, route, catalog)
    assembly = _Assembly()
    iterator = response.__aiter__()
    try:
        while True:
            wait = policy.stall_timeout if assembly.chunks else first_token
            try:
                async with asyncio.timeout(wait):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:
                if not assembly.chunks and policy.first_token is not None:
                    raise _Failure(
                        Kind.DEADLINE, f"no first token within {first_token:g} s"
                    ) from None
                raise _Stalled() from None
            piece = assembly.add(chunk)
            if piece and on_delta is not None:
                on_delta(piece)
    finally:
        closer = getattr(getattr(response, "completion_stream", None), "aclose", None)
        if closer is not None:
            # Closing a stream that already broke may fail again; the failure is recorded.
            with contextlib.suppress(Exception):
                await closer()
    if not assembly.chunks:
        raise _Failure(Kind.STREAM_DIED, "the stream ended before any answer")
    return assembly.reply(route, catalog, messages)


class _Assembly:
    """A streamed answer put back together as the chunks arrive.

    Cheaper than litellm's stream_chunk_builder over the whole list at the end, which on
    a long reply costs as much again as receiving it.
    """

    def __init__(self) -> None:
        self.chunks = 0
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: tuple[int, int] | None = None

    def add(self, chunk: Any) -> str | None:
        self.chunks += 1
        usage = getattr(chunk, "usage", None)
        if usage is not None and getattr(usage, "completion_tokens", None):
            self.usage = _usage(chunk)
        if not chunk.choices:
            return None
        choice = chunk.choices[0]
        self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
        delta = choice.delta
        for call in getattr(delta, "tool_calls", None) or ():
            index = getattr(call, "index", None) or 0
            slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
            slot["id"] = getattr(call, "id", None) or slot["id"]
            function = getattr(call, "function", None)
            if function is not None:
                slot["name"] = getattr(function, "name", None) or slot["name"]
                arguments = getattr(function, "arguments", None)
                if arguments:
                    slot["arguments"].append(
                        arguments if isinstance(arguments, str) else json.dumps(arguments)
                    )
        piece = getattr(delta, "content", None)
        if piece:
            self.text.append(piece)
        return piece

    def reply(self, route: Route, catalog: Catalog, messages: list[dict[str, Any]]) -> Reply:
        text = "".join(self.text)
        calls = tuple(
            ToolCall(slot["id"], slot["name"], "".join(slot["arguments"]))
            for _, slot in sorted(self.calls.items())
        )
        if self.usage is not None:
            prompt, completion = self.usage
        else:  # the provider sent no usage: count the tokens ourselves
            counter = litellm().token_counter
            prompt = int(counter(model="gpt-4o", messages=messages))
            completion = int(
                counter(model="gpt-4o", text=text + "".join(c.arguments for c in calls))
            )
        return _reply(route, catalog, text, calls, self.finish_reason, prompt, completion)


async def complete(
    catalog: Catalog,
    model: str,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    stream: bool = False,
    policy: RetryPolicy | None = None,
    accept: Accept | None = None,
    on_delta: DeltaHook | None = None,
    on_attempt: EventHook | None = None,
    walk_chain: bool = True,
    max_tokens: int | None = None,
    chain: Chain | None = None,
    schema: dict[str, Any] | None = None,
    health: HealthBook | None = None,
    hedge: bool = False,
) -> Result:
    """Ask `model` (then its chain, or the `chain` given) until one answers and `accept`
    takes the answer. With `schema`, models that support structured output are asked for
    JSON matching it instead of calling `tools`. With `health`, the walk is ordered, paced
    and timed by what every Kept process learned about each model, and teaches it back. With
    `hedge` too (not for streams), a model late past its p95 has the next model asked
    beside it (catalog.hedge).

    Never raises for provider trouble: the result says what happened. Raises
    UnknownModelError for a model id the catalog lacks, and CancelledError when cancelled.
    """
    policy = policy or RetryPolicy.from_config(catalog.config.transport)
    chain = chain or catalog.chain(model)
    if not walk_chain:  # one model only, e.g. to test a gateway's key
        chain = replace(chain, models=chain.models[:1], end="no fallback was asked for")
    models, probes = health.order(chain.models) if health else (list(chain.models), set())
    attempts: list[Attempt] = []
    dead_gateways: dict[str, str] = {}
    secrets = _Secrets(catalog.keys.secrets(catalog.gateways.values()))

    def record(attempt: Attempt, key: str | None = None, retry_after: float | None = None) -> None:
        # Every reason carries a provider's words: keys out, escape sequences out.
        attempt = replace(attempt, reason=clean_text(redact(attempt.reason, secrets)))
        attempts.append(attempt)
        if health is not None and attempt.outcome is not Outcome.SKIPPED:
            health.observe(attempt, key=key, retry_after=retry_after)
        if on_attempt is not None:
            on_attempt(attempt)

    def callable_(entry: Any) -> bool:
        route = catalog.route(entry)
        return (
            route.key.usable
            and route.gateway.name not in dead_gateways
            and not (health and health.refused(entry.id, route.key.value))
        )

    async def ask(position: int, entry: Any) -> Result | None:
        """Every try at one model: its accepted answer as the walk's result, or None."""
        route = catalog.route(entry)
        gateway = route.gateway.name
        if gateway in dead_gateways:
            record(
                Attempt(
                    entry.id,
                    gateway,
                    Outcome.SKIPPED,
                    Kind.GATEWAY_DOWN,
                    reason=dead_gateways[gateway],
                )
            )
            return None
        if not route.key.usable:
            record(
                Attempt(
                    entry.id,
                    gateway,
                    Outcome.SKIPPED,
                    Kind.NO_KEY,
                    reason=route.problem or "no key",
                )
            )
            return None
        if health is not None and health.refused(entry.id, route.key.value):
            record(
                Attempt(
                    entry.id,
                    gateway,
                    Outcome.SKIPPED,
                    Kind.AUTH,
                    reason=f"the {route.gateway.label} key was refused earlier: "
                    "check it with /keys",
                )
            )
            return None
        if route.key.value:
            secrets.append(route.key.value)
        later = [
            (callable_(e), bool(health and health.cooling(e.id))) for e in models[position + 1 :]
        ]
        onward = any(can for can, _ in later)  # somewhere else to go after this model
        tries, short = _budget(position, entry.id in probes, later, policy)
        model_policy = _fitted(for_model(policy, entry.deadline), health, entry, stream)
        for try_index in range(tries):
            started, t0 = time.time(), time.monotonic()
            try:
                async with asyncio.timeout(model_policy.attempt_deadline) as deadline:
                    try:
                        reply = await _request(
                            route,
                            catalog,
                            messages,
                            tools=tools,
                            tool_choice=tool_choice,
                            stream=stream,
                            policy=model_policy,
                            on_delta=on_delta,
                            max_tokens=max_tokens,
                            schema=schema,
                        )
                    except _Stalled:
                        raise _Failure(
                            Kind.STALLED, f"the stream stalled for {model_policy.stall_timeout:g} s"
                        ) from None
            except asyncio.CancelledError as cancel:
                record(_cancelled(route, catalog, messages, cancel, time.monotonic() - t0, started))
                raise
            except Exception as exc:  # every failure becomes an Attempt
                if isinstance(exc, TimeoutError) and deadline.expired():
                    failure = _Failure(
                        Kind.DEADLINE,
                        f"no complete answer within {model_policy.attempt_deadline:g} s",
                    )
                elif isinstance(exc, _Failure):
                    failure = exc
                elif isinstance(exc, DoesNotFit):
                    failure = _Failure(Kind.CONTEXT_WINDOW, str(exc))
                else:
                    failure = classify(exc)
                latency = time.monotonic() - t0
                if failure.kind is Kind.AUTH:
                    dead_gateways[gateway] = f"the {gateway} key was refused earlier in this walk"
                    failure.reason = (
                        f"the {route.gateway.label} key was refused: check it with /keys"
                    )
                # With somewhere else to go, a Retry-After is the model's cooldown, not a sleep.
                retry = (
                    failure.kind in policy.retry_on
                    and try_index + 1 < tries
                    and not (onward and failure.retry_after is not None)
                )
                record(
                    Attempt(
                        entry.id,
                        gateway,
                        Outcome.RETRIED if retry else Outcome.FAILED,
                        failure.kind,
                        failure.status,
                        latency,
                        reason=failure.reason,
                        started=started,
                    ),
                    route.key.value,
                    failure.retry_after,
                )
                if not retry:
                    return None
                await asyncio.sleep(
                    min(policy.delay(try_index, None), policy.short_backoff)
                    if short
                    else policy.delay(try_index, failure.retry_after)
                )
                continue
            latency = time.monotonic() - t0
            try:
                value = accept(reply) if accept is not None else reply
            except Exception as rejection:  # whatever breaks the check rejects this reply
                why = (
                    str(rejection)
                    if isinstance(rejection, ReplyRejected)
                    else f"{type(rejection).__name__}: {rejection}"
                )
                kind = rejection.kind if isinstance(rejection, ReplyRejected) else Kind.REJECTED
                record(
                    Attempt(
                        entry.id,
                        gateway,
                        Outcome.REJECTED,
                        kind,
                        None,
                        latency,
                        reply.prompt_tokens,
                        reply.completion_tokens,
                        reply.cost,
                        _one_line(why),
                        started,
                    )
                )
                return None
            record(
                Attempt(
                    entry.id,
                    gateway,
                    Outcome.OK,
                    None,
                    None,
                    latency,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    reply.cost,
                    "",
                    started,
                )
            )
            return Result(model, reply, value, tuple(attempts), "")
        return None

    position = 0
    while position < len(models):
        entry = models[position]
        late = (
            _hedge_after(health, entry, models[position + 1 :], callable_)
            if hedge and not stream
            else None
        )
        if late is None:
            result = await ask(position, entry)
        else:
            result, both = await race(
                partial(ask, position, entry),
                partial(ask, position + 1, models[position + 1]),
                late,
            )
            position += both  # the next model was asked already
        if result is not None:
            return replace(result, attempts=tuple(attempts))
        position += 1
    return Result(model, None, None, tuple(attempts), _summary(chain.ids, attempts, chain.end))


def _hedge_after(
    health: HealthBook | None, entry: Any, rest: Sequence[Any], callable_: Callable[[Any], bool]
) -> float | None:
    """Seconds after which the next model is asked beside `entry`: its p95, or for a model
    that has not answered often enough yet the shortest fitted deadline. None when the
    next model cannot be asked or is cooling, and for a model with its own `deadline` (a
    slow local model is slow on purpose) until its p95 is known."""
    if (
        health is None
        or not rest
        or not callable_(entry)
        or not callable_(rest[0])
        or health.cooling(rest[0].id)
    ):
        return None
    p95 = health.p95(entry.id)
    if p95 is None and entry.deadline is None:
        return health_module.MIN_DEADLINE
    return p95


def _cancelled(
    route: Route,
    catalog: Catalog,
    messages: list[dict[str, Any]],
    cancel: asyncio.CancelledError,
    latency: float,
    started: float,
) -> Attempt:
    """The attempt a cancel ended. One cancelled because the other model of a hedge
    answered first is charged its prompt's estimated cost: the provider read it."""
    if LOST not in cancel.args:
        return Attempt(
            route.entry.id,
            route.gateway.name,
            Outcome.CANCELLED,
            Kind.CANCELLED,
            latency=latency,
            reason="cancelled",
            started=started,
        )
    prompt = int(litellm().token_counter(model="gpt-4o", messages=messages))
    pricing = catalog.pricing(route.entry)
    return Attempt(
        route.entry.id,
        route.gateway.name,
        Outcome.CANCELLED,
        Kind.LATE,
        latency=latency,
        prompt_tokens=prompt,
        cost=pricing.cost(prompt, 0) if pricing else 0.0,
        reason="cancelled: the other model of the hedge answered first",
        started=started,
    )


def _budget(
    position: int, probe: bool, later: Sequence[tuple[bool, bool]], policy: RetryPolicy
) -> tuple[int, bool]:
    """Tries for one model, and whether its retry is the short one. `later` says, for each
    model after it, whether it can be called and whether it is cooling down.

    The last model that can be called gets the full backoff: nowhere else to go. While a
    healthy model follows, the head gets one short retry (a blip passes) and the others,
    like a probe of a model whose cooldown just ended, one try."""
    if not any(can for can, _ in later):
        return policy.retries + 1, False
    if position == 0 and not probe and any(can and not cooling for can, cooling in later):
        return min(2, policy.retries + 1), True
    return 1, False


def _fitted(
    policy: RetryPolicy, health: HealthBook | None, entry: Any, stream: bool
) -> RetryPolicy:
    """The policy with a deadline that follows the model's observed latency: the whole
    answer's, or a stream's first token. A model with its own `deadline` keeps it."""
    if health is None or entry.deadline is not None:
        return policy
    if stream and health.p95(entry.id) is None:
        return policy  # headers within the attempt's deadline, chunks within stall_timeout
    if stream:
        return replace(policy, first_token=health.deadline(entry.id, policy.stall_timeout))
    return replace(policy, attempt_deadline=health.deadline(entry.id, policy.attempt_deadline))


def _summary(ids: Sequence[str], attempts: Sequence[Attempt], end: str) -> str:
    last: dict[str, Attempt] = {}
    for attempt in attempts:
        last[attempt.model] = attempt
    parts = [f"{m}: {last[m].reason}" for m in ids if m in last]
    return f"No model in the chain answered ({end}). " + "; ".join(parts)
