"""Structured output for local servers, and replies sized to a small context window.

A small local model asked to call a tool often writes prose or runs out of room midway
through the arguments. Asked for JSON under a schema, llama.cpp and Ollama compile the
schema into a grammar, so the model can only emit valid JSON. Servers differ in how they
take the schema: OpenAI's `json_schema` response format (llama.cpp's llama-server, Ollama,
LM Studio) or llama-cpp-python's `json_object` with a `schema` (it refuses `json_schema`
with HTTP 422). "auto" tries the first and, refused, learns the second for that server.

A server that says its context window in an error (llama-cpp-python's "exceed context
window of 4096") is taken at its word: that window sizes every later request to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalog.config import MAX_WINDOW, MIN_WINDOW

if TYPE_CHECKING:
    from catalog.catalog import Catalog, Route

JSON_SCHEMA, JSON_OBJECT = "json_schema", "json_object"
# What "auto" learned per (server, model) in this process.
_learned: dict[tuple[str | None, str], str] = {}
# The context window each model said it has, in this process, by its litellm name (what a
# litellm exception carries: "openai/smollm2").
_windows: dict[str, int] = {}


class DoesNotFit(Exception):
    """The prompt alone fills the model's context window: no request is sent."""


def structured_dialect(route: Route, schema: dict[str, Any] | None) -> str | None:
    """The response format to ask this model for, or None to call tools instead."""
    wanted = route.entry.structured_output
    if schema is None or wanted is None:
        return None
    if wanted == "auto":
        return _learned.get((route.api_base, route.entry.id), JSON_SCHEMA)
    return wanted


def response_format(dialect: str, schema: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in schema.items() if k != "title"}
    if dialect == JSON_OBJECT:
        return {"type": "json_object", "schema": body}
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.get("title", "reply"), "schema": body, "strict": True},
    }


def refused_dialect(route: Route, dialect: str, exc: BaseException) -> bool:
    """True when an "auto" server refused `json_schema`: the next request uses the other."""
    if route.entry.structured_output != "auto" or dialect != JSON_SCHEMA:
        return False
    status = getattr(exc, "status_code", None)
    text = str(getattr(exc, "message", None) or exc).lower()
    if status not in (400, 422, 500) or not any(
        word in text for word in ("response_format", "json_object", "json_schema")
    ):
        return False
    _learned[(route.api_base, route.entry.id)] = JSON_OBJECT
    return True


def learn_window(litellm_model: str, window: int) -> None:
    """The model's server said its context window: every later request is sized to it."""
    if MIN_WINDOW <= window <= MAX_WINDOW:  # a figure no server runs with is a misreading
        _windows[litellm_model] = window


def learned_window(litellm_model: str) -> int | None:
    """The context window the model's server said it has, if it said so in this process."""
    return _windows.get(litellm_model)


def fit_max_tokens(
    catalog: Catalog, route: Route, messages: list[dict[str, Any]], requested: int | None
) -> int | None:
    """`requested`, cut so that prompt + reply fit the model's context window.

    Applied to the user's own models (whose window config.toml or the server gave) and to
    any request with a limit; a hosted model with no limit asked keeps its own default. A
    reply with no limit asked may fill at most half the window, so that the conversation
    it joins still fits the next request."""
    entry = route.entry
    pricing = catalog.pricing(entry)
    window = pricing.context_window if pricing else None
    if not window or (requested is None and not entry.user):
        return requested
    from catalog.llm import litellm

    # Counted with a generic tokenizer: the model's own may count up to a tenth more.
    prompt = int(litellm().token_counter(model="gpt-4o", messages=messages) * 1.1) + 32
    room = window - prompt
    if room < 64:
        raise DoesNotFit(
            f"the request needs about {prompt:,} tokens, more than "
            f"{entry.label}'s {window:,}-token context window"
        )
    return min(room, window // 2) if requested is None else min(requested, room)
