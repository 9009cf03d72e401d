"""Sessions as Markdown files, and code blocks out of replies."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from catalog import Catalog
from memory import Journal, LiveSession
from memory.chat.attachments import display_name, mention, records_of, stored_path
from memory.data.files import atomic_write, ensure_dir

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def last_code_block(text: str) -> str | None:
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else None


def session_markdown(
    session: LiveSession | Journal, catalog: Catalog, files: dict[str, str] | None = None
) -> str:
    """The session in Markdown; `files` links each attachment (by digest) to its copy."""
    lines = [f"# Kept session {session.id}", ""]
    for message in session.messages:
        role = message.get("role")
        content = message.get("content") or ""
        when = str(message.get("time", ""))[:16].replace("T", " ")
        if role == "user":
            lines += [f"## You — {when}", "", content, ""]
            lines += [
                _attachment_line(r, (files or {}).get(r["sha256"])) for r in records_of(message)
            ]
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


def _attachment_line(record: dict[str, Any], link: str | None) -> str:
    """`Attached: [report.pdf](<kept-ID_files/report.pdf>) (2 pages, 31 KB)`"""
    name = display_name(record)
    rest = mention(record).removeprefix(f"[attached: {name}").removesuffix("]").lstrip(", ")
    shown = f"[{_escape(name)}](<{link}>)" if link else f"{_escape(name)} (no longer in Kept)"
    return f"*Attached: {shown}{f' ({rest})' if rest else ''}*\n"


def _escape(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)


def _copy_attachments(session: LiveSession | Journal, root: Path, folder: Path) -> dict[str, str]:
    """Copy every attachment of the session that Kept still has into `folder` (created
    only when there is one), each under its own name (made unique); links by digest."""
    links: dict[str, str] = {}
    taken: set[str] = set()
    for message in session.messages:
        for record in records_of(message):
            digest = record["sha256"]
            source = stored_path(root, record)
            if digest in links or not source.is_file():
                continue
            name = _unique(Path(str(record.get("name") or "attachment")).name, taken)
            atomic_write(ensure_dir(folder) / name, source.read_bytes())
            links[digest] = f"{folder.name}/{name}"
    return links


def _unique(name: str, taken: set[str]) -> str:
    name = re.sub(r"[<>\x00-\x1f]", "_", name).lstrip(".") or "attachment"
    stem, dot, suffix = name.rpartition(".") if "." in name else (name, "", "")
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{stem}-{number}{dot}{suffix}"
    taken.add(candidate)
    return candidate


def _data_root(session: LiveSession | Journal) -> Path:
    """The data folder a session's attachments are kept in."""
    if isinstance(session, LiveSession):
        return session.store.root
    folder = session.path.parent  # sessions/DEVICE/, or sessions/DEVICE/done/
    return folder.parents[2] if folder.name == "done" else folder.parents[1]


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
    # The attachments go beside the Markdown, in a folder named after it (as browsers save
    # a page with its files), and the Markdown links them.
    files = _copy_attachments(session, _data_root(session), path.parent / f"{path.stem}_files")
    atomic_write(path, session_markdown(session, catalog, files), follow=True)  # user's choice
    return path
