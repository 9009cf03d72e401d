"""A fake LLM provider: a real HTTP server on 127.0.0.1 that litellm talks to end to end.

One server speaks four wire formats, chosen by the URL path, so every gateway can point at it:

- OpenAI chat completions: ``POST /<gateway>/v1/chat/completions`` (``openai/<name>``, or any other
  gateway name, with ``api_base=fake.base_url(gateway)``, which is ``<url>/<gateway>/v1``)
- Groq: ``POST /groq/v1/chat/completions``, OpenAI-like, plus ``service_tier: null`` and ``x_groq``
- Gemini: ``POST /gemini/models/<model>:generateContent`` (or ``:streamGenerateContent``), text
  answers only (``gemini/<name>``, ``api_base=fake.base_url("gemini")``, which is ``<url>/gemini``)
- Anthropic Messages: ``POST /anthropic/v1/messages`` (``anthropic/<name>``,
  ``api_base=fake.base_url("anthropic")``, which is ``<url>/anthropic``: litellm 1.110.2 appends
  ``/v1/messages`` to it). A prefix-free ``POST /v1/messages`` is also served and recorded as
  gateway ``"anthropic"``, and a prefix-free ``POST /v1/chat/completions`` as gateway ``"openai"``.

Each request pops the next scripted step for the model named in its body (the name without the
litellm provider prefix); a model with an empty queue asks ``responder`` (when set) and then gets
its per-model default, or ``default``.

    with FakeProvider() as fake:
        fake.script("gpt-4.1-mini", http_error(429, retry_after=2), text("hi"))
        await litellm.acompletion(
            model="openai/gpt-4.1-mini", api_base=fake.base_url("openai"), ...
        )

Steps that block (``hang``, ``hold``, ``stall``, ``trickle``) wait on an event that ``release()``
sets; ``stop()`` (and leaving the ``with`` block) releases them and closes every open connection,
so it returns promptly whatever the requests are doing. ``hold`` also notices a client that goes
away (``dropped``). Like a local server, the fake can serve one request at a time
(``one_slot``), and stop listening while the connections it holds stay open
(``stop_listening()``, as uvicorn does on SIGTERM).

Measured against litellm 1.110.2:
an ``http_error`` message matters to litellm's classification for OpenAI-format gateways
("A timeout occurred", the default 524 text, becomes ``Timeout``; any "rate limit" text becomes
``RateLimitError``), so pass ``message=`` when a test needs the status-based class.

Standard library only.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import select
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Cut",
    "ErrorEvent",
    "FakeProvider",
    "Hang",
    "Hold",
    "HttpError",
    "RecordedRequest",
    "Stall",
    "Step",
    "Text",
    "ToolCall",
    "ToolUseFailed",
    "Trickle",
    "cut",
    "error_event",
    "hang",
    "hold",
    "http_error",
    "stall",
    "text",
    "tool_call",
    "tool_use_failed",
    "trickle",
]

DEFAULT_TEXT = "Hello from the fake provider."


# --------------------------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """Base class of everything the fake can do with one request."""


@dataclass(frozen=True)
class Text(Step):
    content: str
    chunks: int = 4
    finish: str = "stop"  # "length": the model stopped at max_tokens or the context's end


@dataclass(frozen=True)
class ToolCall(Step):
    name: str
    arguments: str  # always the exact string sent on the OpenAI wire
    content: str = ""
    also: tuple[ToolCall, ...] = ()  # more calls in the same reply (OpenAI's stream only)


@dataclass(frozen=True)
class HttpError(Step):
    status: int
    retry_after: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class ToolUseFailed(Step):
    failed_generation: str = '<function=unknown>{"oops": true</function>'


@dataclass(frozen=True)
class Hang(Step):
    pass


@dataclass(frozen=True)
class Hold(Step):
    then: Step | None = None


@dataclass(frozen=True)
class Stall(Step):
    after_chunks: int = 2


@dataclass(frozen=True)
class ErrorEvent(Step):
    after_chunks: int = 2


@dataclass(frozen=True)
class Cut(Step):
    after_chunks: int = 2


@dataclass(frozen=True)
class Trickle(Step):
    interval: float
    chunks: int
    content: str = "x"


def text(content: str, chunks: int = 4, finish: str = "stop") -> Text:
    """A normal assistant text answer, streamed as ``chunks`` pieces (also: prose instead of a
    tool call). ``finish="length"`` marks it cut off, as a model that ran out of room."""
    return Text(content, max(1, int(chunks)), finish)


def tool_call(name: str, arguments: dict[str, Any] | str, content: str = "") -> ToolCall:
    """The assistant calls tool ``name``. A dict is JSON-encoded; a str is sent raw (it may be
    invalid JSON or carry wrong-typed values).

    Anthropic needs ``input`` to be an object: a str that is a valid JSON object is sent as that
    object; any other str is sent as ``{"_raw": <the string>}``.
    """
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(name, args, content)


def http_error(
    status: int, retry_after: float | None = None, message: str | None = None
) -> HttpError:
    """Answer with HTTP ``status`` and an error body in the gateway's format, with a
    ``Retry-After`` header when ``retry_after`` is given."""
    return HttpError(int(status), retry_after, message)


def tool_use_failed() -> ToolUseFailed:
    """Groq's 400 ``tool_use_failed`` (OpenAI-format body with ``failed_generation``).
    On the Anthropic route it is an Anthropic-format 400 ``invalid_request_error`` with the
    same message."""
    return ToolUseFailed()


def hang() -> Hang:
    """Read the request and never answer; on ``release()``/stop close without answering."""
    return Hang()


def hold(then: Step | None = None) -> Hold:
    """Read the request and answer nothing until ``release()``, then answer with ``then`` (the
    model's default when None), as a busy local server does. A client that gives up meanwhile
    is noticed at once: the request is added to ``dropped`` and its handler ends."""
    return Hold(then)


def stall(after_chunks: int = 2) -> Stall:
    """Streaming: headers and ``after_chunks`` content chunks, then silence until release
    (then the connection closes). Non-streaming: like ``hang()``."""
    return Stall(max(0, int(after_chunks)))


def error_event(after_chunks: int = 2) -> ErrorEvent:
    """Streaming: ``after_chunks`` content chunks, then an error event in the gateway's format,
    then close. Non-streaming: like ``http_error(500)``."""
    return ErrorEvent(max(0, int(after_chunks)))


def cut(after_chunks: int = 2) -> Cut:
    """Streaming: ``after_chunks`` content chunks, then the socket is reset (no final event, no
    ``[DONE]``). Non-streaming: a Content-Length larger than the body sent, then reset."""
    return Cut(max(0, int(after_chunks)))


def trickle(interval: float, chunks: int, content: str = "x") -> Trickle:
    """A text answer of ``chunks`` pieces (each ``content``), one every ``interval`` seconds.
    Non-streaming: waits ``interval * chunks`` then answers. ``release()`` aborts it (the
    connection closes without the rest)."""
    return Trickle(float(interval), max(1, int(chunks)), content)


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    gateway: str  # the path prefix ("openai", "groq", "anthropic", ...)
    path: str
    model: str  # the body's "model", as it arrived (no litellm provider prefix)
    body: dict[str, Any] = field(hash=False)
    headers: dict[str, str] = field(hash=False)  # lower-cased names
    stream: bool
    time: float  # time.monotonic() on arrival

    @property
    def judging(self) -> bool:
        """Whether it asks for a second opinion (memory.consolidation.judge)."""
        return _judging(self.body)


# --------------------------------------------------------------------------------------------
# Wire helpers
# --------------------------------------------------------------------------------------------

_OPENAI_ERROR_KIND = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "model_not_found"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}
_ANTHROPIC_ERROR_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    400: "Invalid request (fake provider).",
    401: "Invalid API key (fake provider).",
    403: "Permission denied (fake provider).",
    404: "The model does not exist (fake provider).",
    429: "Rate limit reached (fake provider). Please try again later.",
    500: "Internal server error (fake provider).",
    503: "Service unavailable (fake provider).",
    524: "A timeout occurred (fake provider).",
    529: "Overloaded (fake provider).",
}
_TOOL_USE_FAILED_MESSAGE = (
    "Failed to call a function. Please adjust your prompt. "
    "See 'failed_generation' for more details."
)


def _split(s: str, n: int) -> list[str]:
    """``s`` in ``n`` nearly equal pieces (fewer if ``s`` is shorter; one piece if empty)."""
    n = max(1, min(n, len(s)))
    size, extra = divmod(len(s), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(s[pos : pos + step])
        pos += step
    return out or [""]


def _tokens(s: str) -> int:
    return max(1, (len(s) + 3) // 4)


def _prompt_tokens(body: dict[str, Any]) -> int:
    parts = [body.get("messages"), body.get("system"), body.get("tools")]
    return _tokens(json.dumps([p for p in parts if p], default=str))


def _anthropic_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def _format_retry_after(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _filler(i: int) -> str:
    return f"partial{i} "


# --------------------------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------------------------


class _Aborted(Exception):
    """The step was released mid-way: close the connection without finishing."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, fake: FakeProvider) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:  # quiet
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "FakeProvider/1.0"
    sys_version = ""

    # ---- plumbing ---------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        """The model lists a local server answers: OpenAI's /v1/models, Ollama's /api/tags."""
        fake = self.server.fake
        parts = [p for p in self.path.split("?", 1)[0].split("/") if p]
        if parts[1:] == ["v1", "models"] and not fake.ollama_only:
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in fake.served],
                },
            )
            return
        said = fake.vision is not None or fake.tools is not None
        if parts[1:] == ["props"] and (fake.n_ctx or fake.total_slots or said):
            props: dict[str, Any] = {}  # as llama-server answers
            if fake.vision is not None:
                props["modalities"] = {"vision": fake.vision, "audio": False}
            if fake.tools is not None:
                props["chat_template_caps"] = {
                    "supports_tools": fake.tools,
                    "supports_tool_calls": fake.tools,
                }
            if fake.n_ctx:
                props["default_generation_settings"] = {"n_ctx": fake.n_ctx}
            if fake.total_slots:
                props["total_slots"] = fake.total_slots
            self._json(200, props)
            return
        if parts[1:] == ["api", "tags"]:
            self._json(200, {"models": [{"name": m, "model": m} for m in fake.served]})
            return
        self._json(
            404, {"error": {"message": f"no route for GET {self.path}", "type": "not_found"}}
        )

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        gateway, fmt = _route(self.path)
        stream = body.get("stream") is True
        model = str(body.get("model", ""))
        if fmt == "gemini":  # the model and streaming are in the path, not the body
            method = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
            model, _, verb = method.partition(":")
            stream = verb == "streamGenerateContent"
        self.record = RecordedRequest(
            gateway=gateway,
            path=self.path,
            model=model,
            body=body,
            headers={k.lower(): v for k, v in self.headers.items()},
            stream=stream,
            time=time.monotonic(),
        )
        fake._record(self.record)
        self.gateway, self.body, self.model = gateway, body, model
        self.finish_reason = "stop"
        if fmt is None:  # e.g. a doubled /v1/v1/messages: answer like the real thing, 404
            self.fmt = "anthropic" if self.path.split("?", 1)[0].endswith("/messages") else "openai"
            self._error(404, f"Not found: POST {self.path} (fake provider)", None)
            return
        self.fmt = fmt
        # One request at a time, like llama-cpp-python's server: the next one waits.
        with fake._slot if fake.one_slot else contextlib.nullcontext():
            step = fake._next_step(model, body)
            self.gate = fake._gate_now()
            try:
                self._serve(step, stream)
            except _Aborted:
                self.close_connection = True
            except OSError:  # the client went away (BrokenPipe, ConnectionReset, ...)
                self.close_connection = True

    # ---- output primitives ------------------------------------------------------------

    def _json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

    def _sse(self, data: Any, event: str | None = None) -> None:
        out = f"event: {event}\n" if event else ""
        out += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(out.encode())
        self.wfile.flush()

    def _wait(self, seconds: float | None) -> None:
        """Sleep ``seconds`` (forever if None) unless released, which raises _Aborted."""
        if self.gate.wait(seconds):
            raise _Aborted

    def _hold(self) -> None:
        """Wait for ``release()``; a client that closes its end first is recorded in
        ``dropped`` and aborts the step (nothing more can be sent to it)."""
        while not self.gate.is_set():
            # Wakes at once when the client's FIN or RST arrives; the timeout only looks
            # at the gate again.
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if not readable:
                continue
            try:
                gone = not self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                gone = True
            if gone:
                self.server.fake._dropped_now(self.record)
                raise _Aborted

    def _reset(self) -> None:
        """Close the socket abruptly (RST, not FIN)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            self.rfile.close()
        with contextlib.suppress(OSError):
            self.connection.close()

    # ---- steps ------------------------------------------------------------------------

    def _serve(self, step: Step, stream: bool) -> None:
        if isinstance(step, Text):
            self.finish_reason = step.finish
            self._answer(_split(step.content, step.chunks), None, stream)
        elif isinstance(step, ToolCall):
            self._answer(_split(step.content, 4) if step.content else [], step, stream)
        elif isinstance(step, HttpError):
            self._error(step.status, step.message, step.retry_after)
        elif isinstance(step, ToolUseFailed):
            self._tool_use_failed(step)
        elif isinstance(step, Hang) or (isinstance(step, Stall) and not stream):
            self._wait(None)
        elif isinstance(step, Hold):
            self._hold()
            self._serve(step.then or self.server.fake._fallback(self.model), stream)
        else:
            self._serve_broken(step, stream)

    def _serve_broken(self, step: Step, stream: bool) -> None:
        """A reply that breaks on its way (a stall, an error event, a cut) or trickles."""
        if isinstance(step, Stall):
            self._stream_prefix(step.after_chunks)
            self._wait(None)
        elif isinstance(step, ErrorEvent):
            if not stream:
                self._error(500, None, None)
                return
            self._stream_prefix(step.after_chunks)
            self._stream_error()
        elif isinstance(step, Cut):
            if stream:
                self._stream_prefix(step.after_chunks)
            else:
                self._truncated_json()
            self._reset()
        elif isinstance(step, Trickle):
            pieces = [step.content] * step.chunks
            if stream:
                self._answer(pieces, None, True, interval=step.interval)
            else:
                self._wait(step.interval * step.chunks)
                self._answer(pieces, None, False)
        else:  # pragma: no cover - a new Step type without a branch
            raise TypeError(f"unknown step {step!r}")

    # ---- errors -------------------------------------------------------------------------

    def _error(self, status: int, message: str | None, retry_after: float | None) -> None:
        message = message or _DEFAULT_MESSAGES.get(status, f"HTTP {status} (fake provider).")
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = _format_retry_after(retry_after)
        if self.fmt == "anthropic":
            kind = _ANTHROPIC_ERROR_TYPE.get(status, "api_error")
            payload = {"type": "error", "error": {"type": kind, "message": message}}
            headers["request-id"] = f"req_{uuid.uuid4().hex[:24]}"
        else:
            kind, code = _OPENAI_ERROR_KIND.get(status, ("server_error", None))
            payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self._json(status, payload, headers)

    def _tool_use_failed(self, step: ToolUseFailed) -> None:
        if self.fmt == "anthropic":
            payload = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": _TOOL_USE_FAILED_MESSAGE},
            }
        else:
            payload = {
                "error": {
                    "message": _TOOL_USE_FAILED_MESSAGE,
                    "type": "invalid_request_error",
                    "code": "tool_use_failed",
                    "failed_generation": step.failed_generation,
                }
            }
        self._json(400, payload)

    def _truncated_json(self) -> None:
        data = json.dumps(
            self._openai_message([_filler(0)], None)
            if self.fmt != "anthropic"
            else self._anthropic_message([_filler(0)], None)
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) + 1000))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()

    # ---- answers ------------------------------------------------------------------------

    def _answer(
        self, pieces: list[str], tool: ToolCall | None, stream: bool, interval: float | None = None
    ) -> None:
        if self.fmt == "gemini":  # text only: Kept's tests of Gemini send no tools
            self._gemini_answer(pieces, stream, interval)
            return
        if not stream:
            if self.fmt == "anthropic":
                self._json(200, self._anthropic_message(pieces, tool))
            else:
                self._json(200, self._openai_message(pieces, tool))
            return
        self._sse_start()
        if self.fmt == "anthropic":
            self._anthropic_stream(pieces, tool, interval)
        else:
            self._openai_stream(pieces, tool, interval)

    def _usage(self, completion_text: str) -> tuple[int, int]:
        return _prompt_tokens(self.body), _tokens(completion_text)

    # Gemini (generateContent) ------------------------------------------------------------

    def _gemini_chunk(self, text: str, finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        candidate["index"] = 0
        if finish is not None:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "modelVersion": self.model}

    def _gemini_answer(self, pieces: list[str], stream: bool, interval: float | None) -> None:
        prompt, completion = self._usage("".join(pieces))
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        }
        if not stream:
            message = self._gemini_chunk("".join(pieces), "STOP")
            self._json(200, {**message, "usageMetadata": usage})
            return
        self._sse_start()
        for number, piece in enumerate(pieces, 1):
            if interval is not None:
                self._wait(interval)
            chunk = self._gemini_chunk(piece, "STOP" if number == len(pieces) else None)
            if number == len(pieces):
                chunk["usageMetadata"] = usage
            self._sse(chunk)

    # OpenAI / Groq --------------------------------------------------------------------

    def _ids(self) -> tuple[str, int]:
        if not hasattr(self, "_resp_id"):
            self._resp_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
            self._created = int(time.time())
        return self._resp_id, self._created

    def _openai_usage(self, prompt: int, completion: int) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if self.gateway == "groq":
            usage.update(queue_time=0.01, prompt_time=0.002, completion_time=0.02, total_time=0.022)
        return usage

    def _openai_message(self, pieces: list[str], tool: ToolCall | None) -> dict[str, Any]:
        rid, created = self._ids()
        content = "".join(pieces)
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        finish = getattr(self, "finish_reason", "stop")
        completion_text = content
        if tool is not None:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {"name": tool.name, "arguments": tool.arguments},
                }
            ]
            finish = "tool_calls"
            completion_text += tool.name + tool.arguments
        elif not content:
            message["content"] = ""
        prompt, completion = self._usage(completion_text)
        out: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion",
            "created": created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": self._openai_usage(prompt, completion),
            "system_fingerprint": "fp_fake",
        }
        if self.gateway == "groq":
            out["service_tier"] = None
            out["x_groq"] = {"id": f"req_{uuid.uuid4().hex[:24]}"}
        else:
            out["service_tier"] = "default"
        return out

    def _openai_chunk(
        self, delta: dict[str, Any], finish: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        rid, created = self._ids()
        chunk = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": self.model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        chunk.update(extra)
        return chunk

    def _openai_stream(
        self, pieces: list[str], tool: ToolCall | None, interval: float | None
    ) -> None:
        first_extra: dict[str, Any] = (
            {"x_groq": {"id": f"req_{uuid.uuid4().hex[:24]}"}} if self.gateway == "groq" else {}
        )
        self._sse(self._openai_chunk({"role": "assistant", "content": ""}, **first_extra))
        for piece in pieces:
            if interval is not None:
                self._wait(interval)
            self._sse(self._openai_chunk({"content": piece}))
        completion_text = "".join(pieces)
        finish = getattr(self, "finish_reason", "stop")
        for index, call in enumerate((tool, *tool.also) if tool is not None else ()):
            call_id = f"call_{uuid.uuid4().hex[:24]}"
            self._sse(
                self._openai_chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for part in _split(call.arguments, max(2, len(call.arguments) // 8)):
                self._sse(
                    self._openai_chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": index,
                                    "function": {"arguments": part},
                                }
                            ]
                        }
                    )
                )
            finish = "tool_calls"
            completion_text += call.name + call.arguments
        self._sse(self._openai_chunk({}, finish))
        prompt, completion = self._usage(completion_text)
        if (self.body.get("stream_options") or {}).get("include_usage"):
            usage_chunk = self._openai_chunk({}, None, usage=self._openai_usage(prompt, completion))
            usage_chunk["choices"] = []
            self._sse(usage_chunk)
        self._sse("[DONE]")

    # Anthropic ------------------------------------------------------------------------

    def _anthropic_message(self, pieces: list[str], tool: ToolCall | None) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        text_ = "".join(pieces)
        if text_ or tool is None:
            content.append({"type": "text", "text": text_})
        completion_text = text_
        if tool is not None:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:24]}",
                    "name": tool.name,
                    "input": _anthropic_input(tool.arguments),
                }
            )
            completion_text += tool.name + tool.arguments
        prompt, completion = self._usage(completion_text)
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": "tool_use" if tool is not None else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt,
                "output_tokens": completion,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def _anthropic_start(self) -> None:
        self._sse(
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{uuid.uuid4().hex[:24]}",
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": _prompt_tokens(self.body),
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
            "message_start",
        )

    def _anthropic_stream(
        self, pieces: list[str], tool: ToolCall | None, interval: float | None
    ) -> None:
        self._anthropic_start()
        index = 0
        text_ = "".join(pieces)
        if text_ or tool is None:
            self._sse(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
            self._sse({"type": "ping"}, "ping")
            for piece in pieces:
                if interval is not None:
                    self._wait(interval)
                self._sse(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                    "content_block_delta",
                )
            self._sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            index += 1
        completion_text = text_
        if tool is not None:
            self._sse(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": f"toolu_{uuid.uuid4().hex[:24]}",
                        "name": tool.name,
                        "input": {},
                    },
                },
                "content_block_start",
            )
            partial = json.dumps(_anthropic_input(tool.arguments))
            for part in _split(partial, max(2, len(partial) // 8)):
                self._sse(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part},
                    },
                    "content_block_delta",
                )
            self._sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            completion_text += tool.name + tool.arguments
        self._sse(
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if tool is not None else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": _tokens(completion_text)},
            },
            "message_delta",
        )
        self._sse({"type": "message_stop"}, "message_stop")

    # Faults mid-stream --------------------------------------------------------------------

    def _stream_prefix(self, n: int) -> None:
        """Headers plus ``n`` content chunks of an answer that will not finish normally."""
        self._sse_start()
        if self.fmt == "anthropic":
            self._anthropic_start()
            self._sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
            for i in range(n):
                self._sse(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": _filler(i)},
                    },
                    "content_block_delta",
                )
        else:
            self._sse(self._openai_chunk({"role": "assistant", "content": ""}))
            for i in range(n):
                self._sse(self._openai_chunk({"content": _filler(i)}))

    def _stream_error(self) -> None:
        if self.fmt == "anthropic":
            self._sse(
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                "error",
            )
        else:
            self._sse(
                {
                    "error": {
                        "message": "The server had an error while processing your "
                        "request (fake provider).",
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                }
            )


_GEMINI_METHODS = (":generateContent", ":streamGenerateContent")


def _judging(body: dict[str, Any]) -> bool:
    """Whether the request asks for a second opinion (memory.consolidation.judge)."""
    tools = body.get("tools") or []
    names = {(t.get("function") or {}).get("name") or t.get("name") for t in tools}
    return "judge_notes" in names


def _pairs(body: dict[str, Any]) -> int:
    text = json.dumps(body.get("messages") or body.get("system") or "")
    return len(re.findall(r"Pair \d+", text))


def agree(body: dict[str, Any], verdict: str = "supported") -> ToolCall:
    """A judge's answer giving `verdict` to every pair the request holds."""
    verdicts = [{"pair": n, "verdict": verdict} for n in range(1, _pairs(body) + 1)]
    return tool_call("judge_notes", {"verdicts": verdicts})


def _route(path: str) -> tuple[str, str | None]:
    """(gateway, format) for a request path; format is "openai", "anthropic", "gemini" or
    None (404). Gemini's is ``/<gw>/models/<model>:generateContent`` (or
    ``:streamGenerateContent?alt=sse``), as litellm 1.110.2 calls it with an ``api_base``.

    Strict on purpose, like a real server: ``/<gw>/v1/chat/completions`` and
    ``/<gw>/v1/messages``, or the prefix-free ``/v1/chat/completions`` (gateway "openai") and
    ``/v1/messages`` (gateway "anthropic"). A doubled ``/v1/v1/...`` is a 404.
    """
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) == 3 and parts[1] == "models" and parts[2].endswith(_GEMINI_METHODS):
        return parts[0], "gemini"
    if parts[:1] == ["v1"]:
        gateway, rest = "", parts[1:]
    else:
        gateway, rest = (parts[0] if parts else ""), parts[1:]
        if rest[:1] != ["v1"]:
            return gateway, None
        rest = rest[1:]
    if rest == ["messages"]:
        return gateway or "anthropic", "anthropic"
    if rest == ["chat", "completions"]:
        return gateway or "openai", "openai"
    return gateway, None


# --------------------------------------------------------------------------------------------
# Public object
# --------------------------------------------------------------------------------------------


class FakeProvider:
    """A real HTTP server on 127.0.0.1 speaking OpenAI, Groq, Anthropic and (text only)
    Gemini wire formats."""

    _counter = itertools.count()

    def __init__(self) -> None:
        self.default: Step = text(DEFAULT_TEXT)
        # What GET /<gw>/v1/models and /<gw>/api/tags list; ollama_only: no /v1/models.
        self.served: list[str] = []
        self.ollama_only = False
        self.n_ctx: int | None = None  # set: GET /<gw>/props answers like llama-server
        self.total_slots: int | None = None  # set: /props says how many requests run at once
        self.vision: bool | None = None  # set: /props says whether the model sees images
        self.tools: bool | None = None  # set: /props says whether it takes tool calls
        self.one_slot = False  # True: one request is served at a time, the others wait
        # Held requests whose client went away before they were answered, in that order.
        self.dropped: list[RecordedRequest] = []
        self.connections = 0  # accepted so far, requests or not
        # Answers that depend on what was asked: called with the parsed request body when the
        # model has no scripted step left; a Step answers it, None leaves it to the defaults.
        self.responder: Callable[[dict[str, Any]], Step | None] | None = None
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._slot = threading.Lock()
        self._scripts: dict[str, deque[Step]] = {}
        self._judge: deque[Step] = deque()
        self._defaults: dict[str, Step] = {}
        self._requests: list[RecordedRequest] = []
        self._gate = threading.Event()
        self._stopping = False
        self._conns: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> FakeProvider:
        if self._server is not None:
            return self
        with self._lock:
            self._stopping = False
            if self._gate.is_set():
                self._gate = threading.Event()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeProvider-{next(self._counter)}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        with self._lock:
            self._stopping = True
        self.release()
        server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # wake handlers idling on keep-alive connections
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if thread is not None:
            thread.join(timeout=2)
        self._server = self._thread = None

    def stop_listening(self) -> None:
        """Close the listening socket and keep every open connection as it is, as uvicorn
        does when a server is stopped with SIGTERM: a new connection is refused, a held
        request stays open until it is released. ``stop()`` still ends everything."""
        server = self._server
        if server is None:
            return
        server.shutdown()  # serve_forever stops selecting on the socket before it closes
        server.socket.close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- addresses --------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeProvider is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, gateway: str) -> str:
        """The api_base to give litellm for ``gateway``.

        ``"anthropic"`` -> ``<url>/anthropic`` (litellm appends ``/v1/messages``), ``"gemini"``
        -> ``<url>/gemini`` (litellm appends ``/models/<model>:generateContent``); any other
        name ``x`` -> ``<url>/x/v1`` (OpenAI format; litellm appends ``/chat/completions``).
        """
        if gateway in ("anthropic", "gemini"):
            return f"{self.url}/{gateway}"
        return f"{self.url}/{gateway}/v1"

    # ---- scripting ----------------------------------------------------------------------

    def script(self, model: str, *steps: Step) -> None:
        """Queue ``steps`` for requests whose body ``model`` equals ``model``."""
        for s in steps:
            if not isinstance(s, Step):
                raise TypeError(f"not a Step: {s!r}")
        with self._lock:
            self._scripts.setdefault(model, deque()).extend(steps)

    def set_default(self, model: str, step: Step) -> None:
        """The step ``model`` gets, forever, whenever its queue is empty."""
        if not isinstance(step, Step):
            raise TypeError(f"not a Step: {step!r}")
        with self._lock:
            self._defaults[model] = step

    def reset(self) -> None:
        """Clear scripts, per-model defaults and records (``default`` is kept)."""
        with self._lock:
            self._scripts.clear()
            self._judge.clear()
            self._defaults.clear()
            self._requests.clear()

    def release(self) -> None:
        """Wake every hanging, stalled or trickling request so it ends. Later blocking steps
        block again (until the next release), except after stop."""
        with self._lock:
            gate = self._gate
            self._gate = threading.Event()
            if self._stopping:
                self._gate.set()
        gate.set()

    def pending(self, model: str) -> int:
        """How many scripted steps are still queued for ``model``."""
        with self._lock:
            return len(self._scripts.get(model, ()))

    # ---- records --------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the recorded requests, in arrival order."""
        with self._lock:
            return list(self._requests)

    def count(
        self, model: str | None = None, gateway: str | None = None, *, judging: bool = False
    ) -> int:
        """How many requests arrived (for `model`, at `gateway`); second opinions
        (memory.consolidation.judge) only with `judging`."""
        with self._lock:
            return sum(
                1
                for r in self._requests
                if (model is None or r.model == model)
                and (gateway is None or r.gateway == gateway)
                and (judging or not _judging(r.body))
            )

    def wait_for_requests(self, n: int, timeout: float = 120.0) -> bool:
        """Block until at least ``n`` requests have arrived (True) or ``timeout`` passes (False).

        The default is far above the work: the first request of a process imports litellm,
        about 5 s on a quiet machine and several times that on a busy one."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._requests) >= n, timeout=timeout)

    def wait_for_connections(self, n: int, timeout: float = 120.0) -> bool:
        """Block until at least ``n`` connections were accepted (True) or ``timeout`` passes."""
        with self._cond:
            return self._cond.wait_for(lambda: self.connections >= n, timeout=timeout)

    # ---- used by the handler ----------------------------------------------------------

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(rec)
            self._cond.notify_all()

    def _dropped_now(self, rec: RecordedRequest) -> None:
        with self._cond:
            self.dropped.append(rec)
            self._cond.notify_all()

    def _fallback(self, model: str) -> Step:
        """What a model answers when nothing is scripted for it: its default, or ``default``."""
        with self._lock:
            return self._defaults.get(model, self.default)

    def judge(self, *steps: Step) -> None:
        """Queue ``steps`` for second-opinion requests (the judge_notes tool), whichever
        model is asked; with none queued, a judge agrees with every pair."""
        with self._lock:
            self._judge.extend(steps)

    def _next_step(self, model: str, body: dict[str, Any] | None = None) -> Step:
        if body is not None and _judging(body):
            with self._lock:
                if self._judge:
                    return self._judge.popleft()
            return agree(body)
        with self._lock:
            queue = self._scripts.get(model)
            if queue:
                return queue.popleft()
            responder = self.responder
            fallback = self._defaults.get(model, self.default)
        if responder is not None and body is not None:
            # Outside the lock: a responder may take its time, or look at the records.
            step = responder(body)
            if step is not None:
                if not isinstance(step, Step):
                    raise TypeError(f"responder returned {step!r}, not a Step")
                return step
        return fallback

    def _gate_now(self) -> threading.Event:
        with self._lock:
            return self._gate

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._cond:
            if add:
                self._conns.add(conn)
                self.connections += 1
                self._cond.notify_all()
            else:
                self._conns.discard(conn)
