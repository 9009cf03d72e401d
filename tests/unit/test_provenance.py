"""`kept memory blame`: each line's last writer, from versions written by real consolidations;
undo of a consolidation; the messages a line most likely came from."""

from __future__ import annotations

import pytest

from app.cli.main import main
from memory import MemorySettings, MemoryStore, consolidate_pending
from memory.message import Message
from memory.recall.provenance import blame, history_entry_for, likely_messages
from tests.fakes.provider import FakeProvider, tool_call
from tests.support import FAST_POLICY, fake_catalog, pending_session, save_args

FIRST = "# About Ana\n- Lives in Zürich\n- Drinks green tea\n"
SECOND = "# About Ana\n- Lives in Lisbon\n- Drinks green tea\n- Plays the cello\n"


async def consolidated(
    store: MemoryStore,
    fake: FakeProvider,
    model: str,
    memory: str,
    messages: list[Message],
    quotes: dict[str, int],
    base: str = "",
) -> str:
    """One session saved by `model` (as the provider names it), its edits taking MEMORY.md
    from `base` to `memory`, each new line quoting the whole message `quotes` gives it (by
    number, 1 the first); returns the session id."""
    journal = pending_session(store, messages)
    arguments = save_args(entry=f"Ana said: {messages[0]['content']}", memory=memory, base=base)
    for edit in arguments["edits"]:
        number = quotes[edit["line"]]
        edit["evidence"] = [{"message": number, "quote": messages[number - 1]["content"]}]
    fake.set_default(model, tool_call("save_memory", arguments))
    (result,) = await consolidate_pending(store, fake_catalog(fake), policy=FAST_POLICY)
    assert result.saved
    return journal.id


@pytest.fixture
async def history(fake: FakeProvider) -> tuple[MemoryStore, str, str]:
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()
    one = await consolidated(
        store,
        fake,
        "llama-3.3-70b-versatile",
        FIRST,
        [
            {
                "role": "user",
                "content": "I live in Zürich and drink green tea every morning.",
                "time": "2026-11-20T09:15:00+00:00",
            },
            {"role": "assistant", "content": "Lovely!", "time": "2026-11-20T09:15:02+00:00"},
        ],
        {"- Lives in Zürich": 1, "- Drinks green tea": 1},
    )
    # The head now refuses, so the next model in the chain writes the second version.
    fake.set_default("llama-3.3-70b-versatile", tool_call("other_tool", {}))
    two = await consolidated(
        store,
        fake,
        "qwen/qwen3-32b",
        SECOND,
        [
            {
                "role": "user",
                "content": "We moved: I live in Lisbon now.",
                "time": "2026-11-21T10:00:00+00:00",
            },
            {"role": "assistant", "content": "Noted.", "time": "2026-11-21T10:00:05+00:00"},
            {
                "role": "user",
                "content": "Also, I started to play the cello last week.",
                "time": "2026-11-21T10:01:00+00:00",
            },
        ],
        {"- Lives in Lisbon": 1, "- Plays the cello": 3},
        base=FIRST,
    )
    return store, one, two


def test_blame_names_the_session_and_model_of_each_line(
    history: tuple[MemoryStore, str, str],
) -> None:
    store, one, two = history
    store.memory_path.write_text(SECOND + "- Likes jazz\n")  # an edit Kept has not versioned
    lines = blame(store)
    assert [line.text for line in lines] == [*SECOND.splitlines(), "- Likes jazz"]
    writers = {line.text: line.version for line in lines}
    assert writers.pop("- Likes jazz") is None
    written = {text: (v.session, v.model) for text, v in writers.items() if v is not None}
    assert written["# About Ana"][0] == one
    assert written["- Drinks green tea"] == (one, "llama-3.3-70b-versatile")
    assert written["- Lives in Lisbon"][0] == two
    assert written["- Plays the cello"][1] == "qwen3-32b"


def test_a_restore_gives_lines_back_to_their_writers(history: tuple[MemoryStore, str, str]) -> None:
    store, one, _ = history
    first = next(v.number for v in store.versions() if v.session == one)
    store.restore(first)
    assert {line.version and line.version.session for line in blame(store)} == {one}


def test_blame_command_prints_version_date_session_model(
    history: tuple[MemoryStore, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    store, one, two = history
    assert main(["memory", "blame"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5
    assert two in out[2] and out[2].endswith("│ - Previously: Lives in Zürich (until 2026-11)")
    assert one in out[0] and "llama-3.3-70b-versatile" in out[0]
    assert out[0].endswith("│ # About Ana")
    assert two in out[1] and "qwen3-32b" in out[1] and out[1].endswith("│ - Lives in Lisbon")
    version = next(v for v in store.versions() if v.session == two)
    assert out[1].startswith(f"v{version.number} ") and version.time[:10] in out[1]


def test_blame_of_an_empty_memory_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "blame"]) == 0
    assert "MEMORY.md is empty" in capsys.readouterr().err


def test_the_line_leads_to_its_entry_and_messages(history: tuple[MemoryStore, str, str]) -> None:
    store, _, two = history
    entry = history_entry_for(store, two)
    assert entry is not None and entry.body.endswith("Ana said: We moved: I live in Lisbon now.")
    messages = store.find_session(two).messages
    assert likely_messages(messages, "- Plays the cello")[0] == 2
    assert likely_messages(messages, "- Lives in Lisbon")[0] == 0
    assert likely_messages(messages, "- Owns a sailboat") == []


def test_undo_puts_back_what_a_consolidation_replaced(
    history: tuple[MemoryStore, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    store, one, two = history
    version = next(v for v in store.versions() if v.session == two)
    entries = len(store.all_history_entries())
    assert main(["memory", "undo", str(version.number)]) == 0
    assert store.memory_path.read_text() == FIRST
    assert len(store.all_history_entries()) == entries  # the history entry stays
    assert store.versions()[-1].source == f"undo of version {version.number}"
    assert {line.version and line.version.session for line in blame(store)} == {one}
    capsys.readouterr()
    # Undoing again, now that MEMORY.md has moved on, changes nothing and says why.
    assert main(["memory", "undo", str(version.number)]) == 2
    assert "changed after version" in capsys.readouterr().err
    assert store.memory_path.read_text() == FIRST


async def test_undo_of_the_first_consolidation_empties_memory(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()
    await consolidated(
        store,
        fake,
        "llama-3.3-70b-versatile",
        FIRST,
        [{"role": "user", "content": "I live in Zürich and drink green tea."}],
        {"- Lives in Zürich": 1, "- Drinks green tea": 1},
    )
    (version,) = store.versions()
    store.undo(version.number)
    assert store.memory_path.read_text() == ""
    assert blame(store) == []
