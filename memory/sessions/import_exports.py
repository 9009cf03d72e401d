"""Other tools' chat exports become pending sessions: ChatGPT's and Claude.ai's
`conversations.json`, and llm's SQLite `logs.db` (each format read in
memory.sessions.exports).

Each conversation becomes an ordinary journal, closed and pending, with its original times;
only its header says where it came from. Its session id is made from its original start
time (its first message's when the export has none) and its id in the export (its content
when it has none), so importing the same export again (after a crash, a Ctrl+C or a damaged
conversation) skips what is already there: nothing is imported twice. Two different
conversations under one id and time both are: the second's id also holds its content.
Each journal is written whole and renamed into place, so none is ever half there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from memory.data.files import atomic_write, ensure_dir
from memory.data.store import MemoryStore
from memory.sanitize import clean_text
from memory.sessions.exports.chatgpt import chatgpt_conversation
from memory.sessions.exports.claude import claude_conversation
from memory.sessions.exports.json_array import TOO_DEEP
from memory.sessions.exports.json_array import json_array as json_array
from memory.sessions.exports.llm import llm_conversations
from memory.sessions.exports.records import Conversation as Conversation
from memory.sessions.exports.records import Damaged as Damaged
from memory.sessions.exports.records import ExportError as ExportError
from memory.sessions.journal import FORMAT_VERSION, now_iso
from memory.sessions.marks import HEADER_KIND


class Source(StrEnum):
    CHATGPT = "chatgpt"
    CLAUDE = "claude"
    LLM = "llm"


WHAT = {
    Source.CHATGPT: "a ChatGPT export",
    Source.CLAUDE: "a Claude.ai export",
    Source.LLM: "llm's logs.db",
}


def export_source(path: Path) -> Source | None:
    """Whose export the file looks like, from its first bytes and its first conversation
    (ChatGPT's have a 'mapping' of messages, Claude.ai's 'chat_messages'; llm's log is an
    SQLite database); None for anything else, a Kept transcript included."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if head.startswith(b"SQLite format 3\0"):
        return Source.LLM
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as stream:
            for _index, item in json_array(stream, path.name):
                if isinstance(item, dict) and "mapping" in item:
                    return Source.CHATGPT
                if isinstance(item, dict) and "chat_messages" in item:
                    return Source.CLAUDE
                return None
    except (ExportError, OSError):
        return None
    return None


def suggestion(path: Path, source: Source) -> str:
    """The sentence that names the export and the command that imports it."""
    import shlex

    return (
        f"{path} is {WHAT[source]}: `kept import --from {source} "
        f"{shlex.quote(str(path))}` imports it."
    )


@dataclass
class ImportReport:
    imported: int = 0
    messages: int = 0
    already: int = 0  # imported before: skipped
    empty: int = 0  # no message with text: nothing to import
    damaged: list[Damaged] | None = None
    stopped: str = ""  # why reading stopped before the end of the export

    def __post_init__(self) -> None:
        self.damaged = self.damaged or []


def _described(index: int, item: Any) -> str:
    title = item.get("title") or item.get("name") if isinstance(item, dict) else None
    return f"conversation {index + 1}" + (f" ({clean_text(str(title))[:60]!r})" if title else "")


def json_conversations(path: Path, source: Source) -> Iterator[tuple[str, Conversation | Damaged]]:
    """Each conversation of a ChatGPT or Claude.ai export, read one at a time."""
    parse = chatgpt_conversation if source is Source.CHATGPT else claude_conversation
    with open(path, encoding="utf-8", errors="replace", newline="") as stream:
        for index, item in json_array(stream, path.name):
            where = _described(index, item)
            if item is TOO_DEEP:
                yield where, Damaged(where, "it is nested too deeply to read")
            elif not isinstance(item, dict):
                yield where, Damaged(where, "it is not a JSON object")
            else:
                yield where, _parsed(parse, item, where)


def _parsed(
    parse: Callable[[dict[str, Any]], Conversation], item: dict[str, Any], where: str
) -> Conversation | Damaged:
    """The conversation `parse` makes of `item`, with an id (its content's when the export
    gives none: an id is what makes a second import a no-op); or why it is damaged."""
    try:
        conversation = parse(item)
        if conversation.source_id:
            return conversation
        digest = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        return Damaged(where, clean_text(str(exc)) or type(exc).__name__)
    except RecursionError:
        return Damaged(where, "it is nested too deeply to read")
    return replace(conversation, source_id=digest[:32])


def conversations(path: Path, source: Source) -> Iterator[tuple[str, Conversation | Damaged]]:
    if source is Source.LLM:
        return llm_conversations(path)
    return json_conversations(path, source)


# --- writing -------------------------------------------------------------------------------


def content_digest(conversation: Conversation) -> str:
    """What the conversation says, in a few characters: who said what, in order."""
    said = [(m["role"], m["content"]) for m in conversation.messages]
    return hashlib.sha256(json.dumps(said, ensure_ascii=False).encode()).hexdigest()[:16]


def session_id_for(source: Source, conversation: Conversation, digest: str = "") -> str:
    """The same conversation of the same tool always gets the same session id; `digest`
    (its content) tells apart two conversations that share an id and a time."""
    key = f"{source}:{conversation.source_id}" + (f":{digest}" if digest else "")
    tag = hashlib.sha256(key.encode()).hexdigest()[:6]
    return conversation.created.strftime("%Y%m%d-%H%M%S-") + tag


def _header(store: MemoryStore, session_id: str) -> dict[str, Any] | None:
    """The first line of the session's journal; None when there is no such session (a
    journal whose header cannot be read counts as there: never imported twice)."""
    for folder in [f for pair in store.layout.session_folders() for f in pair]:
        try:
            with open(folder / f"{session_id}.jsonl", encoding="utf-8", errors="replace") as f:
                first = json.loads(f.readline())
        except FileNotFoundError:
            continue
        except (OSError, ValueError, RecursionError):
            return {}
        return first if isinstance(first, dict) else {}
    return None


def new_session_id(store: MemoryStore, source: Source, conversation: Conversation) -> str | None:
    """The session id to import the conversation as, or None when it was imported before.

    Its id and time name it; a session already there under that name that came from
    another conversation (the same id and time, different words) makes the id hold the
    content as well. Sessions imported before digests were kept count as the same."""
    digest = content_digest(conversation)
    imported = f"{source}:{conversation.source_id}"
    first = session_id_for(source, conversation)
    header = _header(store, first)
    if header is None:
        return first
    if not header or (
        header.get("imported") == imported and header.get("digest") in (None, digest)
    ):
        return None
    second = session_id_for(source, conversation, digest)
    return second if _header(store, second) is None else None


def write_session(
    store: MemoryStore, source: Source, conversation: Conversation, session_id: str | None = None
) -> str:
    """The conversation as a closed, pending journal, written whole then renamed in."""
    session_id = session_id or session_id_for(source, conversation)
    header: dict[str, Any] = {
        "kept": HEADER_KIND,
        "version": FORMAT_VERSION,
        "id": session_id,
        "created": conversation.created.isoformat(timespec="seconds"),
        "model": conversation.model,
        "imported": f"{source}:{conversation.source_id}",
        "digest": content_digest(conversation),
    }
    if conversation.title:
        header["title"] = clean_text(conversation.title)
    lines = [
        header,
        *conversation.messages,
        {
            "mark": "pending",
            "start": 0,
            "end": len(conversation.messages),
            "closed": True,
            "time": now_iso(),
        },
    ]
    text = "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    )
    atomic_write(store.sessions_dir / f"{session_id}.jsonl", text)
    return session_id


def import_export(
    store: MemoryStore,
    source: Source,
    path: str | Path,
    *,
    on_progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import every conversation of an export not imported before.

    A damaged conversation is named in the report and the rest are imported; an export
    that cannot be read any further stops the import there (`report.stopped`), with what
    came before it imported. OSError (no such file, ...) is raised before anything is done.
    """
    path = Path(path)
    store.ensure()
    ensure_dir(store.sessions_dir)
    report = ImportReport()
    try:
        for _where, found in conversations(path, source):
            if isinstance(found, Damaged):
                report.damaged.append(found)  # type: ignore[union-attr]
            elif not found.messages:
                report.empty += 1
            elif (session_id := new_session_id(store, source, found)) is None:
                report.already += 1
            else:
                write_session(store, source, found, session_id)
                report.imported += 1
                report.messages += len(found.messages)
            if on_progress is not None:
                on_progress(report)
    except ExportError as exc:
        report.stopped = str(exc)
    return report
