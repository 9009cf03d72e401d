"""A model's answer put together: from one response, or chunk by chunk from a stream, and
priced and cleaned where the model's words enter Kept."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from catalog.catalog import Catalog, Route
from catalog.llm import litellm
from catalog.sanitize import clean_text, whole_characters
from catalog.transport.records import Reply, ToolCall


def usage(response: Any) -> tuple[int, int]:
    """Prompt and completion tokens as the provider counted them (0, 0 when it did not)."""
    counted = getattr(response, "usage", None)
    if counted is None:
        return 0, 0
    return int(getattr(counted, "prompt_tokens", 0) or 0), int(
        getattr(counted, "completion_tokens", 0) or 0
    )


def to_reply(response: Any, route: Route, catalog: Catalog) -> Reply:
    """The Reply of a whole (not streamed) response."""
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
    prompt, completion = usage(response)
    return priced_reply(
        route,
        catalog,
        message.content or "",
        calls,
        getattr(choice, "finish_reason", None),
        prompt,
        completion,
    )


def priced_reply(
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


class Assembly:
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
        # The first half of a character whose second half is in the next chunk: a
        # provider may send an emoji as two escaped surrogates in two events.
        self.half = ""

    def add(self, chunk: Any) -> str | None:
        """Take one chunk; the text it adds, if any."""
        self.chunks += 1
        counted = getattr(chunk, "usage", None)
        if counted is not None and getattr(counted, "completion_tokens", None):
            self.usage = usage(chunk)
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
        piece, self.half = self.half + str(getattr(delta, "content", None) or ""), ""
        if (
            piece
            and "\ud800" <= piece[-1] <= "\udbff"
            and not getattr(choice, "finish_reason", None)
        ):
            piece, self.half = piece[:-1], piece[-1]  # shown with its other half
        piece = whole_characters(piece)
        if piece:
            self.text.append(piece)
        return piece or None

    def reply(self, route: Route, catalog: Catalog, messages: list[dict[str, Any]]) -> Reply:
        text = "".join(self.text) + whole_characters(self.half)
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
        return priced_reply(route, catalog, text, calls, self.finish_reason, prompt, completion)
