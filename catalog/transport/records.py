"""What a walk hands back: the kinds of failure, each attempt, the reply and the verdict.

Plain frozen records and StrEnums, so that a log line read back is the same record that
was written, and every reader names a kind instead of comparing strings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


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
    # It answered with a change its caller's checks refused (a memory edit not grounded in
    # what the user said): counted against the model's record, not its reachability.
    REFUSED_EDIT = "refused_edit"
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
# The kinds that say "this model is unreachable now", as opposed to "it answered badly".
UNREACHABLE = TRANSIENT | {Kind.DEADLINE, Kind.STALLED}


class Outcome(StrEnum):
    OK = "ok"  # answered and accepted
    RETRIED = "retried"  # failed; the same model is tried again after a backoff
    FAILED = "failed"  # failed; the walk moves on to the next model
    REJECTED = "rejected"  # answered, but the answer did not do the job
    SKIPPED = "skipped"  # no request was made (no key, gateway written off)
    CANCELLED = "cancelled"


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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempt:
        """The attempt a `to_dict()` line came from; ValueError names what is wrong with a
        line that is not one (a damaged log is read around, not trusted)."""
        try:
            kind = data.get("kind")
            status = data.get("status")
            return cls(
                model=str(data["model"]),
                gateway=str(data["gateway"]),
                outcome=Outcome(data["outcome"]),
                kind=Kind(kind) if kind else None,
                status=int(status) if status is not None else None,
                latency=float(data.get("latency") or 0.0),
                prompt_tokens=int(data.get("prompt_tokens") or 0),
                completion_tokens=int(data.get("completion_tokens") or 0),
                cost=float(data.get("cost") or 0.0),
                reason=str(data.get("reason") or ""),
                started=datetime.fromisoformat(str(data["time"])).timestamp(),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not an attempt record ({type(exc).__name__}: {exc})") from None


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


EventHook = Callable[[Attempt], None]
DeltaHook = Callable[[str], None]
Accept = Callable[[Reply], Any]


@dataclass(frozen=True)
class Ask:
    """What every model of one walk is asked, and how."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tool_choice: Any
    stream: bool
    on_delta: DeltaHook | None
    max_tokens: int | None
    schema: dict[str, Any] | None
    background: bool = False  # gives way to the chat at a one-request local server
