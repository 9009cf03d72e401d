"""Sessions as Markdown files, and code blocks out of replies."""

from __future__ import annotations

import json
import re
from pathlib import Path

from catalog import Catalog
from memory import Journal, LiveSession
from memory.files import atomic_write, ensure_dir

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def last_code_block(text: str) -> str | None:
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else None


def session_markdown(session: LiveSession | Journal, catalog: Catalog) -> str:
    lines = [f"# Kept session {session.id}", ""]
    for message in session.messages:
        role = message.get("role")
        content = message.get("content") or ""
        when = str(message.get("time", ""))[:16].replace("T", " ")
        if role == "user":
            lines += [f"## You — {when}", "", content, ""]
        elif role == "assistant" and content:
            model = message.get("model")
            label = (
                catalog.get(model).label
                if isinstance(model, str) and model in catalog
                else (model or "Assistant")
            )
            lines += [f"## {label} — {when}", "", content, ""]
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                lines += [_tool_call_line(call), ""]
    return "\n".join(lines)


def _tool_call_line(call: object) -> str:
    """One tool call as the export shows it; a field an import left out is said missing."""
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    name = function.get("name")
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    shown = f"`{arguments}`" if isinstance(arguments, str) else "(no arguments)"
    if name == "search_history":
        return f"*Searched history: {shown}*"
    return f"*Called {name if isinstance(name, str) else '(an unnamed tool)'}: {shown}*"


def export_session(
    session: LiveSession | Journal, catalog: Catalog, target: str | None, exports: Path
) -> Path:
    """Write the session to `target` (a file or folder), by default into `exports` (the
    data folder's exports/, never whatever folder Kept was started from)."""
    path = Path(target).expanduser() if target else ensure_dir(exports)
    if path.is_dir():
        path = path / f"kept-{session.id}.md"
    atomic_write(path, session_markdown(session, catalog), follow=True)  # the user's choice
    return path
