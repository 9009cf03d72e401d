"""What went wrong with one attempt, in Kept's terms: a litellm exception becomes a `Kind`
with a sentence in the provider's own words, and any Retry-After it carried."""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass

from catalog.structured import learn_window
from catalog.transport.records import Kind


class AttemptFailure(Exception):
    """An attempt that failed, classified: why (`kind`, `reason`), the HTTP status if one
    came, and how long the provider asked to be left alone."""

    def __init__(
        self, kind: Kind, reason: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.status, self.retry_after = kind, reason, status, retry_after


def retry_after(exc: BaseException) -> float | None:
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
        return str(error["message"])
    return text


# How servers say a request did not fit their context window, with the window when they
# give it: llama-cpp-python's own error and its server's OpenAI-style 400 (as OpenAI's),
# then llama.cpp's llama-server, whose older builds leave the size out.
_WINDOW_SAID = (
    re.compile(r"exceeds? (?:the )?context window of (\d+)"),
    re.compile(r"maximum context length is (\d+)"),
    re.compile(r"exceeds? the available context size(?: \((\d+) tokens?\))?"),
)


def said_window(text: str) -> tuple[bool, int | None]:
    """Whether `text` says a request overflowed the context window, and the window's size
    in tokens when it says that too."""
    for pattern in _WINDOW_SAID:
        match = pattern.search(text)
        if match:
            return True, int(match.group(1)) if match.group(1) else None
    return False, None


def one_line(text: str, limit: int = 300) -> str:
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


def classify(exc: BaseException) -> AttemptFailure:
    """Map a litellm exception to a failure kind (transient or model-level)."""
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    raw = str(getattr(exc, "message", None) or exc)
    said = _Said(status, one_line(provider_message(exc)), raw.lower())
    overflowed, window = said_window(said.lowered)
    model = getattr(exc, "model", None)  # litellm's name for it: "openai/smollm2"
    if window is not None and isinstance(model, str):
        learn_window(model, window)  # its server said it: every later request fits it
    for kinds in (_refusals, _request_faults, _server_faults):
        failure = kinds(exc, said, overflowed, window)
        if failure is not None:
            return failure
    return AttemptFailure(Kind.UNKNOWN, f"{type(exc).__name__}: {said.message}", status)


@dataclass(frozen=True)
class _Said:
    """What an exception says: its status, its message on one line, its raw text lowered."""

    status: int | None
    message: str
    lowered: str


def _refusals(
    exc: BaseException, said: _Said, overflowed: bool, window: int | None
) -> AttemptFailure | None:
    """A broken stream, a refused key, a rate limit, a conversation too long."""
    import litellm.exceptions as le

    status, message = said.status, said.message
    if isinstance(exc, le.MidStreamFallbackError):
        if isinstance(getattr(exc, "original_exception", None), le.Timeout):
            return AttemptFailure(Kind.STALLED, "the stream stalled midway", status)
        return AttemptFailure(Kind.STREAM_DIED, f"the stream broke off midway: {message}", status)
    if isinstance(exc, le.AuthenticationError | le.PermissionDeniedError):
        return AttemptFailure(Kind.AUTH, "the key was refused", status)
    if isinstance(exc, le.RateLimitError):
        return AttemptFailure(Kind.RATE_LIMIT, f"rate limited: {message}", status, retry_after(exc))
    if isinstance(exc, le.ContextWindowExceededError) or overflowed:
        size = f" (its server's window is {window:,} tokens)" if window else ""
        return AttemptFailure(
            Kind.CONTEXT_WINDOW, f"the conversation is too long for this model{size}", status
        )
    return None


def _request_faults(
    exc: BaseException, said: _Said, overflowed: bool, window: int | None
) -> AttemptFailure | None:
    """A request the provider refused or could not find, one that took too long, or one
    that never connected."""
    import litellm.exceptions as le

    status, message, lowered = said.status, said.message, said.lowered
    if isinstance(exc, le.BadRequestError):
        body = getattr(exc, "body", None)
        code = body.get("code") if isinstance(body, dict) else None
        if code == "tool_use_failed" or any(s in lowered for s in _TOOL_CALL_FAILED):
            return AttemptFailure(
                Kind.TOOL_CALL_FAILED, "the model failed to call the tool", status
            )
        return AttemptFailure(Kind.BAD_REQUEST, f"request refused: {message}", status)
    if isinstance(exc, le.NotFoundError):
        return AttemptFailure(Kind.NOT_FOUND, f"not found: {message}", status)
    if isinstance(exc, le.Timeout):
        # litellm reports an upstream 504, and an OpenAI-format 524 (Cloudflare's page says
        # "A timeout occurred"), as a Timeout with status 408.
        if status in (504, 524) or "a timeout occurred" in lowered or "error code 524" in lowered:
            return AttemptFailure(
                Kind.GATEWAY_TIMEOUT,
                "upstream timed out (524)" if status != 504 else "upstream timed out (504)",
                status,
            )
        return AttemptFailure(Kind.TIMEOUT, "no answer in time", status)
    if _connection_failed(exc, lowered):
        return AttemptFailure(Kind.CONNECTION, f"could not connect: {message}", None)
    return None


_TOOL_CALL_FAILED = ("tool_use_failed", "failed to call a function")


def _server_faults(
    exc: BaseException, said: _Said, overflowed: bool, window: int | None
) -> AttemptFailure | None:
    """The provider's own trouble: overloaded, an upstream timeout, a server error."""
    import litellm.exceptions as le

    server = le.APIError | le.InternalServerError | le.ServiceUnavailableError
    if not isinstance(exc, server | le.APIConnectionError):
        return None
    status = said.status
    if status == 529 or "overloaded" in said.lowered:
        return AttemptFailure(
            Kind.OVERLOADED, "the provider is overloaded", status, retry_after(exc)
        )
    if status in (504, 524):
        return AttemptFailure(Kind.GATEWAY_TIMEOUT, f"upstream timed out ({status})", status)
    return AttemptFailure(
        Kind.SERVER_ERROR, f"server error: {said.message}", status, retry_after(exc)
    )
