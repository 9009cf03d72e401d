"""Other tools' chat exports become pending sessions: ChatGPT's and Claude.ai's
`conversations.json`, and llm's SQLite `logs.db`.

Each conversation becomes an ordinary journal, closed and pending, with its original times;
only its header says where it came from. Its session id is made from its original start
time (its first message's when the export has none) and its id in the export (its content
when it has none), so importing the same export again (after a crash, a Ctrl+C or a damaged
conversation) skips what is already there: nothing is imported twice. Two different
conversations under one id and time both are: the second's id also holds its content.
Each journal is written whole and renamed into place, so none is ever half there.

Exports run to hundreds of megabytes: JSON exports are read one conversation at a time
from a buffered file (`json.JSONDecoder.raw_decode` over the top-level array), never whole.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from memory.data.files import atomic_write, ensure_dir
from memory.data.store import MemoryStore
from memory.sanitize import clean_text
from memory.sessions.journal import FORMAT_VERSION, now_iso
from memory.sessions.marks import HEADER_KIND

READ_SIZE = 1 << 20  # characters read at a time from a JSON export
# The start of time stands for a conversation that says nothing of when it was held: its
# session id must be the same at every import.
UNKNOWN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
TOO_DEEP = object()  # what json_array yields for an element nested too deeply to decode


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


class ExportError(ValueError):
    """The export cannot be read any further (what came before it is imported)."""


@dataclass(frozen=True)
class Conversation:
    """One conversation of an export, as Kept will journal it."""

    source_id: str
    title: str
    created: datetime
    model: str | None
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Damaged:
    """A conversation that could not be used, and why, in the user's terms."""

    where: str  # "conversation 12 ('Trip to Lisbon')"
    reason: str


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


# --- reading a large JSON array ------------------------------------------------------------


# A string (whole), a bracket, or the start of a string not yet read to its end.
_TOKENS = re.compile(r'"(?:[^"\\]+|\\.)*"|[\[\]{}]|"', re.S)


def _value_end(buffer: str, start: int) -> int | None:
    """Where the array or object at `start` ends, found without recursion (it is nested
    past what the decoder can); None when `buffer` does not hold its end yet."""
    depth = 0
    for token in _TOKENS.finditer(buffer, start):
        found = token.group()
        if found == '"':
            return None
        if found[0] == '"':
            continue
        depth += 1 if found in "[{" else -1
        if depth <= 0:
            return token.end()
    return None


def json_array(stream: TextIO, name: str) -> Iterator[tuple[int, Any]]:
    """The elements of the JSON array `stream` holds, one at a time: (index, value).

    Only one element (and one read) is in memory at a time. Raises ExportError naming the
    element that is not valid JSON; the elements before it have been yielded. An element
    nested too deeply to decode is skipped and yielded as TOO_DEEP.
    """
    decoder = json.JSONDecoder()
    buffer, position, eof = "", 0, False
    want = READ_SIZE

    def fill() -> bool:
        nonlocal buffer, position, eof
        chunk = stream.read(want)
        if not chunk:
            eof = True
            return False
        buffer = buffer[position:] + chunk
        position = 0
        return True

    def skip(separators: str) -> str:
        """The next significant character (not consumed), past whitespace and separators."""
        nonlocal position
        while True:
            while position < len(buffer) and (
                buffer[position].isspace() or buffer[position] in separators
            ):
                position += 1
            if position < len(buffer):
                return buffer[position]
            if not fill():
                return ""

    if skip("\ufeff") != "[":
        raise ExportError(
            f"{name} is not a JSON array of conversations (it should begin with '[')."
        )
    position += 1
    index = 0
    while True:
        found = skip("," if index else "")
        if found == "]":
            return
        if found == "":
            raise ExportError(
                f"{name} ends in the middle of conversation {index + 1} (the file is cut short)."
            )
        last: tuple[int, str] | None = None
        while True:
            try:
                value, end = decoder.raw_decode(buffer, position)
                break
            except RecursionError:
                skipped = _value_end(buffer, position)
                if skipped is not None:
                    value, end = TOO_DEEP, skipped
                    break
                if eof:
                    raise ExportError(
                        f"{name} ends in the middle of conversation {index + 1} (the file "
                        "is cut short)."
                    ) from None
                want = min(want * 2, 1 << 28)
                fill()
            except json.JSONDecodeError as exc:
                # Invalid, or only cut off by the end of what was read? Read more: an error
                # that stays where it was is real (a long string is only unterminated yet).
                seen = (exc.pos - position, exc.msg)
                real = seen == last and not exc.msg.startswith("Unterminated string")
                if eof or real:
                    raise ExportError(
                        f"{name}: conversation {index + 1} is not valid JSON ({exc.msg})."
                    ) from None
                last = seen
                want = min(want * 2, 1 << 28)
                fill()
        want = READ_SIZE
        position = end
        yield index, value
        index += 1


# --- the formats ---------------------------------------------------------------------------


def _when(value: Any) -> datetime | None:
    """A Unix time (ChatGPT) or an ISO time (Claude.ai, llm) as an aware datetime."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return when if when.tzinfo else when.replace(tzinfo=UTC)
    return None


def _message(
    role: str, text: str, when: datetime | None, fallback: datetime, model: str | None = None
) -> dict[str, Any] | None:
    text = clean_text(text).strip()
    if not text:
        return None
    message: dict[str, Any] = {
        "role": role,
        "content": text,
        "time": (when or fallback).isoformat(timespec="seconds"),
    }
    if model and role == "assistant":
        message["model"] = model
    return message


def _described(index: int, item: Any) -> str:
    title = item.get("title") or item.get("name") if isinstance(item, dict) else None
    return f"conversation {index + 1}" + (f" ({clean_text(str(title))[:60]!r})" if title else "")


def _text(value: Any) -> str:
    """An id, a title or a model name from an export, cleaned like any text from outside."""
    return clean_text(str(value)) if value else ""


def _node(mapping: dict[Any, Any], node_id: Any) -> dict[str, Any]:
    node = mapping[node_id]
    if not isinstance(node, dict):
        raise ValueError(f"node {_text(node_id)!r} is not an object")
    return node


def chatgpt_conversation(item: dict[str, Any]) -> Conversation:
    """The branch the user last saw (from `current_node` up to the root): edits and
    regenerated replies left on other branches are not part of the conversation.

    Both walks are loops over a seen-set: a tree that loops back on itself ends, and one
    thousands of nodes deep costs no recursion."""
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise ValueError("it has no 'mapping' of messages")
    node_id = item.get("current_node")
    seen: set[object] = set()
    if not isinstance(node_id, str) or node_id not in mapping:
        # No pointer to the last message: follow the last children down from the root.
        node_id = next(
            (k for k, n in mapping.items() if isinstance(n, dict) and not n.get("parent")), None
        )
        while node_id in mapping and node_id not in seen:
            seen.add(node_id)
            children = _node(mapping, node_id).get("children") or []
            if not isinstance(children, list):
                raise ValueError(f"the children of node {_text(node_id)!r} are not a list")
            if not children or not isinstance(children[-1], str):
                break
            node_id = children[-1]
        seen = set()
    path: list[dict[str, Any]] = []
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = _node(mapping, node_id)
        path.append(node)
        node_id = node.get("parent")
    messages, model = [], None
    path.reverse()
    created = _when(item.get("create_time")) or next(
        (
            when
            for node in path
            if isinstance(node.get("message"), dict)
            and (when := _when(node["message"].get("create_time")))
        ),
        _when(item.get("update_time")) or UNKNOWN_TIME,
    )
    for node in path:
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        role = (message.get("author") or {}).get("role")
        metadata = message.get("metadata") or {}
        if role not in ("user", "assistant") or metadata.get(
            "is_visually_hidden_from_conversation"
        ):
            continue
        if message.get("recipient", "all") != "all":
            continue  # a call to a tool (browsing, code), not words to the user
        content = message.get("content") or {}
        parts = content.get("parts")
        if isinstance(parts, list):
            text = "\n".join(p for p in parts if isinstance(p, str))
        else:
            given = content.get("text")
            text = given if isinstance(given, str) else ""
        slug = _text(metadata.get("model_slug")) or None
        model = slug or model
        found = _message(role, text, _when(message.get("create_time")), created, slug)
        if found:
            messages.append(found)
    source_id = _text(item.get("conversation_id") or item.get("id"))
    return Conversation(source_id, _text(item.get("title")), created, model, tuple(messages))


def claude_conversation(item: dict[str, Any]) -> Conversation:
    chat = item.get("chat_messages")
    if not isinstance(chat, list):
        raise ValueError("it has no list of 'chat_messages'")
    created = _when(item.get("created_at")) or next(
        (
            when
            for entry in chat
            if isinstance(entry, dict) and (when := _when(entry.get("created_at")))
        ),
        _when(item.get("updated_at")) or UNKNOWN_TIME,
    )
    messages = []
    for entry in chat:
        if not isinstance(entry, dict):
            raise ValueError("a message is not an object")
        role = {"human": "user", "user": "user", "assistant": "assistant"}.get(
            str(entry.get("sender"))
        )
        if role is None:
            continue
        text = entry.get("text")
        if not isinstance(text, str) or not text.strip():
            blocks = entry.get("content") or []
            text = "\n".join(
                b["text"]
                for b in blocks
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            )
        found = _message(role, text, _when(entry.get("created_at")), created)
        if found:
            messages.append(found)
    return Conversation(
        _text(item.get("uuid")), _text(item.get("name")), created, None, tuple(messages)
    )


def json_conversations(path: Path, source: Source) -> Iterator[tuple[str, Conversation | Damaged]]:
    """Each conversation of a ChatGPT or Claude.ai export, read one at a time."""
    parse = chatgpt_conversation if source is Source.CHATGPT else claude_conversation
    with open(path, encoding="utf-8", errors="replace", newline="") as stream:
        for index, item in json_array(stream, path.name):
            where = _described(index, item)
            if item is TOO_DEEP:
                yield where, Damaged(where, "it is nested too deeply to read")
                continue
            if not isinstance(item, dict):
                yield where, Damaged(where, "it is not a JSON object")
                continue
            try:
                conversation = parse(item)
                if not conversation.source_id:  # an id is what makes a second import a no-op
                    digest = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                yield where, Damaged(where, clean_text(str(exc)) or type(exc).__name__)
                continue
            except RecursionError:
                yield where, Damaged(where, "it is nested too deeply to read")
                continue
            if not conversation.source_id:
                conversation = Conversation(
                    digest[:32],
                    conversation.title,
                    conversation.created,
                    conversation.model,
                    conversation.messages,
                )
            yield where, conversation


def llm_conversations(path: Path) -> Iterator[tuple[str, Conversation | Damaged]]:
    """llm's logs.db: each conversation's responses in order, a prompt and a reply each."""
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ExportError(f"{path} could not be opened as an SQLite database ({exc}).") from None
    try:
        try:
            rows = db.execute(
                "SELECT r.id, r.conversation_id, c.name, r.model, r.prompt, r.response, "
                "r.datetime_utc FROM responses r LEFT JOIN conversations c "
                "ON c.id = r.conversation_id "
                "ORDER BY coalesce(r.conversation_id, r.id), r.datetime_utc, r.rowid"
            )
        except sqlite3.DatabaseError as exc:
            raise ExportError(_llm_problem(path, exc, "is not llm's logs.db")) from None
        current: list[tuple[Any, ...]] = []
        key = None
        count = 0
        try:
            for row in rows:
                row_key = row[1] or row[0]
                if current and row_key != key:
                    count += 1
                    yield _llm_conversation(count, current)
                    current = []
                key = row_key
                current.append(row)
        except sqlite3.DatabaseError as exc:
            raise ExportError(
                _llm_problem(path, exc, f"stopped being read after {count} conversations")
            ) from None
        if current:
            yield _llm_conversation(count + 1, current)
    finally:
        db.close()


def _llm_problem(path: Path, exc: sqlite3.DatabaseError, otherwise: str) -> str:
    """Why llm's database could not be read: locked by a program writing to it (llm
    itself, most likely), or what `otherwise` says."""
    if "locked" in str(exc) or "busy" in str(exc):
        return (
            f"{path} is locked by a program writing to it (llm itself, most likely): "
            "import it again when that is done."
        )
    return f"{path} {otherwise} ({exc})."


def _llm_conversation(
    number: int, rows: list[tuple[Any, ...]]
) -> tuple[str, Conversation | Damaged]:
    first = rows[0]
    title = _text(first[2])
    where = (
        f"conversation {number}"
        + (f" ({title[:60]!r})" if title else "")
        + f" [{first[1] or first[0]}]"
    )
    created = _when(first[6])
    if created is None:
        return where, Damaged(where, f"its time {first[6]!r} is not a date")
    messages = []
    for _id, _conversation, _name, model, prompt, response, stamp in rows:
        when = _when(stamp) or created
        for role, text in (("user", prompt), ("assistant", response)):
            if isinstance(text, str):
                found = _message(role, text, when, created, _text(model) or None)
                if found:
                    messages.append(found)
    return where, Conversation(
        _text(first[1] or first[0]), title, created, _text(first[3]) or None, tuple(messages)
    )


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
    for folder in (store.sessions_dir, store.done_dir):
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
