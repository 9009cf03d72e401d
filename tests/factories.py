"""Shared factories: the data a test starts from, built through Kept's own code where it
can be (a saved session, a corpus to search, exports to import, a pair of models)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from catalog import ModelEntry
from memory import MemorySettings, MemoryStore
from memory.consolidation.commit import commit
from memory.consolidation.reply import SavedMemory

# --- sessions -------------------------------------------------------------------------------


def saved_session(store: MemoryStore, words: str, day: int) -> str:
    """A session consolidated on 2026-11-`day`, with its history entry and version."""
    journal = store.new_session("gpt-4.1-mini")
    when = f"2026-11-{day:02d}T09:00:00+00:00"
    journal.append({"role": "user", "content": f"Tell me about {words}.", "time": when})
    journal.append(
        {
            "role": "assistant",
            "content": f"{words} is lovely.",
            "time": when,
            "model": "gpt-4.1-mini",
        }
    )
    segment = journal.mark_pending(close=True)
    assert segment is not None
    base = store.read_memory()
    memory = base.text + f"- Likes {words}\n"
    stamp = datetime(2026, 11, day, 9, 0, tzinfo=UTC).astimezone()
    assert commit(
        store,
        journal,
        segment,
        SavedMemory(f"Ana asked about {words}. She liked it.", memory),
        base,
        "gpt-4.1-mini",
        stamp,
    )
    # Named as a journal started that day would be, so the order is the days' order.
    done = store.done_dir / journal.path.name
    header, *rest = done.read_text().splitlines()
    record = json.loads(header)
    record["created"] = when
    done.chmod(0o600)
    done.write_text("\n".join([json.dumps(record), *rest]) + "\n")
    done.chmod(0o400)
    return journal.id


# --- a corpus to search: history, archives, journals -----------------------------------------

HISTORY = (
    "# My history\n\n"
    "[2026-11-20 10:00] Talked about the quokka trip to Zürich.\n"
    "It went on: ZÜRICH in CAPITALS, then 東京 and a 🐨.\r\n\n"
    "[2026-11-21 09:00] Said \"called 'Quokka'\" with a back\\slash and a tab\there.\n\n"
    "[2026-11-22 08:00] The \u212aelvin sign, a long \u017ftrange s, and \u0130stanbul, "
    "\u0131stanbul.\n\n"
)


def journal(store: MemoryStore, sid: str, messages: list[object], *, folder: str = "done") -> Path:
    """A journal as Kept writes one (or, with escapes, as another tool might)."""
    header = {"kept": "session", "version": 1, "id": sid, "created": "2026-10-01T10:00:00"}
    lines = [json.dumps(header, separators=(",", ":"))]
    for item in messages:
        lines.append(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))
    path = (store.done_dir if folder == "done" else store.sessions_dir) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def said(role: str, content: object, day: str = "2026-10-01") -> dict[str, object]:
    return {"role": role, "content": content, "time": f"{day}T10:00:00+00:00"}


def corpus(store: MemoryStore) -> None:
    """History, archives (one not UTF-8), and journals: unicode, case, several lines, JSON
    escapes written both ways, OpenAI's multi-part content, an open and a private one."""
    store.history_path.write_text(HISTORY, encoding="utf-8")
    store.archive_dir.mkdir(parents=True, exist_ok=True)
    (store.archive_dir / "2025-01.md").write_text(
        "[2025-01-03 10:00] Quokka photos, and the piano museum.\n\n"
        "[2025-01-09 10:00] Nothing rare; a straße and a STRASSE.\n\n",
        encoding="utf-8",
    )
    (store.archive_dir / "2025-02.md").write_bytes(
        b"[2025-02-01 10:00] Bytes \xff\xfe not UTF-8, then quokka \x00 NUL.\n\n"
    )
    (store.archive_dir / "undated.md").write_text("[undated] piano museum again\n\n")
    journal(
        store,
        "20250301-100000-aaaaaa",
        [
            said("user", 'My cat is called "Quokka"\nreally, in Zürich', "2025-03-01"),
            said("assistant", "A fine name. tab\there, back\\slash", "2025-03-01"),
            said("user", [{"type": "text", "text": "multi part quokka"}], "2025-03-01"),
        ],
    )
    journal(
        store,
        "20251001-100000-bbbbbb",
        [
            # Written by another tool: every non-ASCII character escaped.
            json.dumps(said("user", "Zürich and 東京 and quokka", "2025-10-01")),
            said("assistant", "ZÜRICH IN CAPITALS, piano museum", "2025-10-01"),
            "not json at all, quokka",
            said("user", "AND OR NOT NEAR( * ^ \"quoted\" ''", "2025-10-01"),
        ],
    )
    journal(
        store,
        "20261110-100000-cccccc",
        [said("user", "Still open: quokka plans", "2026-11-10")],
        folder="open",
    )
    private = store.new_session("gpt-4.1-mini", private=True)
    private.append({"role": "user", "content": "secret quokka plan, private zebra"})


PATTERNS = [
    "quokka",
    "QUOKKA",
    "Quokka",
    "Zürich",
    "ZÜRICH",
    "東京",
    "🐨",
    'called "Quokka"',
    "\"called 'Quokka'\"",
    "back\\slash",
    "tab\there",
    "piano museum",
    "kelvin",
    "strange",
    "istanbul",
    "straße",
    "ok",
    "a",
    "role",
    "content",
    "2026",
    "not UTF-8",
    "\ufffd",
    "NUL",
    "AND OR NOT NEAR(",
    '"quoted"',
    "''",
    "zebra",
    "nowhere to be found",
]


# --- exports from other tools ---------------------------------------------------------------

T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


def node(
    node_id: str,
    parent: str | None,
    children: list[str],
    role: str | None = None,
    text: str = "",
    at: float = T0,
    **extra: Any,
) -> dict[str, Any]:
    """One node of a ChatGPT export's message tree (no message for the root)."""
    message: dict[str, Any] | None = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "weight": 1.0,
            "recipient": "all",
            "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
        }
        message.update(extra)
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def chatgpt_simple(conversation_id: str, words: str, at: float) -> dict[str, Any]:
    """A ChatGPT conversation of one question and its answer."""
    mapping = [
        node("r", None, ["u"]),
        node("u", "r", ["a"], "user", words, at),
        node("a", "u", [], "assistant", f"About {words}.", at + 5),
    ]
    return {
        "title": words,
        "create_time": at,
        "mapping": {n["id"]: n for n in mapping},
        "current_node": "a",
        "conversation_id": conversation_id,
        "id": conversation_id,
    }


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1))
    return path


def llm_db(path: Path) -> Path:
    """simonw/llm's logs.db: two conversations, three responses (one out of order)."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE [conversations] ([id] TEXT PRIMARY KEY, [name] TEXT, [model] TEXT);
        CREATE TABLE [responses] ([id] TEXT PRIMARY KEY, [model] TEXT, [prompt] TEXT,
          [system] TEXT, [prompt_json] TEXT, [options_json] TEXT, [response] TEXT,
          [response_json] TEXT, [conversation_id] TEXT REFERENCES [conversations]([id]),
          [duration_ms] INTEGER, [datetime_utc] TEXT);
    """)
    db.executemany(
        "INSERT INTO conversations VALUES (?, ?, ?)",
        [("01j-a", "Regex help", "gpt-4o-mini"), ("01j-b", "Haiku", "claude-3-haiku")],
    )
    db.executemany(
        "INSERT INTO responses (id, model, prompt, response, conversation_id, "
        "datetime_utc) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                "r2",
                "gpt-4o-mini",
                "And for emails?",
                "Use a library.",
                "01j-a",
                "2024-05-01T10:02:00.000000",
            ),
            (
                "r1",
                "gpt-4o-mini",
                "A regex for dates?",
                r"\d{4}-\d{2}-\d{2}",
                "01j-a",
                "2024-05-01T10:00:00.000000",
            ),
            (
                "r3",
                "claude-3-haiku",
                "A haiku on tea",
                "Steam over the cup",
                "01j-b",
                "2024-06-01T08:00:00.000000",
            ),
        ],
    )
    db.commit()
    db.close()
    return path


# --- models and their health ----------------------------------------------------------------

MESSAGES = [{"role": "user", "content": "Hello there"}]


def entry(model_id: str, gateway: str, fallback: str | None = None) -> ModelEntry:
    return ModelEntry(
        model_id,
        model_id,
        "fast",
        "",
        gateway,
        fallback=fallback,
        context_window=100_000,
        input_per_mtok=1.0,
        output_per_mtok=2.0,
    )


PAIR = (entry("primary", "openai", "backup"), entry("backup", "anthropic"))


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def held_proposal(
    settings: MemorySettings, old: str, new: str, records: tuple[dict[str, Any], ...] = ()
) -> MemoryStore:
    """A store with MEMORY.md `old` whose one session's change to `new` waits for review,
    with `records`, the decision on each edit (memory.consolidation.decisions)."""
    from memory.consolidation.review import propose
    from tests.support import pending_session

    store = MemoryStore(settings=settings).ensure()
    store.write_memory(old)
    journal = pending_session(store)
    (segment,) = journal.pending
    saved = SavedMemory("The user moved to Lyon.", new, records=records)
    when = datetime(2026, 12, 4, 10, 20, tzinfo=UTC)
    propose(store, journal.id, segment, saved, store.read_memory(), "gpt-4.1-mini", when)
    return store
