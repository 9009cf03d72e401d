"""`kept import --from chatgpt|claude|llm`: small exports written in each tool's real shape
(ChatGPT's tree with an edit and a regenerated reply), read as streams; then `kept
consolidate` with a dry run, progress, oldest first, and resuming after Ctrl+C."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from memory import Consolidation, MemoryStore
from memory.sessions.exports import json_array as json_array_module
from memory.sessions.import_exports import ExportError, json_array
from memory.sessions.journal import Journal
from tests.factories import T0, chatgpt_simple, llm_db, node, write_json
from tests.fakes.provider import FakeProvider, tool_call
from tests.support import configure_fake, nothing_new


def chatgpt_trip() -> dict[str, Any]:
    """A conversation whose first question was edited, and whose answer to the edit was
    regenerated: the branch shown last is the current one."""
    mapping = [
        node("root", None, ["sys"]),
        node(
            "sys",
            "root",
            ["q1", "q1-edit"],
            "system",
            "You are ChatGPT.",
            T0,
            metadata={"is_visually_hidden_from_conversation": True},
        ),
        node("q1", "sys", ["a1"], "user", "Plan a trip to Porto", T0 + 10),
        node("a1", "q1", [], "assistant", "Porto it is.", T0 + 20),
        node("q1-edit", "sys", ["a2-old", "a2"], "user", "Plan a trip to Lisbon", T0 + 30),
        node("a2-old", "q1-edit", [], "assistant", "A first answer, regenerated.", T0 + 40),
        node("a2", "q1-edit", ["tool", "q2"], "assistant", "Lisbon: go in May.", T0 + 50),
        node("tool", "a2", [], "assistant", "search('lisbon')", T0 + 55, recipient="browser"),
        node("q2", "a2", [], "user", "", T0 + 60),
    ]
    mapping[-1]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
            "And this photo? It's the tram.",
        ],
    }
    return {
        "title": "Trip planning",
        "create_time": T0,
        "update_time": T0 + 60,
        "mapping": {n["id"]: n for n in mapping},
        "current_node": "q2",
        "conversation_id": "c-trip",
        "id": "c-trip",
        "default_model_slug": "gpt-4o",
    }


def sessions(store: MemoryStore) -> list[Journal]:
    return store.pending_sessions()


def test_chatgpt_keeps_the_current_branch_with_its_times_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write_json(
        tmp_path / "conversations.json", [chatgpt_trip(), chatgpt_simple("c-2", "tea", T0 + 86_400)]
    )
    assert main(["import", "--from", "chatgpt", str(export)]) == 0
    assert "Imported 2 ChatGPT conversations (5 messages)" in capsys.readouterr().out
    trip, tea = sessions(MemoryStore())  # oldest first: ids begin with the original time
    assert trip.id.startswith("20231114-221320-") and tea.id.startswith("20231115-")
    assert [(m["role"], m["content"]) for m in trip.messages] == [
        ("user", "Plan a trip to Lisbon"),
        ("assistant", "Lisbon: go in May."),
        ("user", "And this photo? It's the tram."),
    ]
    assert trip.messages[0]["time"] == "2023-11-14T22:13:50+00:00"
    assert trip.messages[1]["model"] == "gpt-4o" and trip.model == "gpt-4o"
    assert trip.state == "pending"
    header = json.loads(trip.path.read_text().splitlines()[0])
    assert header["imported"] == "chatgpt:c-trip" and header["title"] == "Trip planning"


def test_importing_again_imports_nothing_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write_json(tmp_path / "c.json", [chatgpt_simple("c-1", "tea", T0)])
    assert main(["import", "--from", "chatgpt", str(export)]) == 0
    write_json(export, [chatgpt_simple("c-1", "tea", T0), chatgpt_simple("c-2", "jam", T0)])
    capsys.readouterr()
    assert main(["import", "--from", "chatgpt", str(export)]) == 0
    out = capsys.readouterr().out
    assert "Imported 1 ChatGPT conversations" in out and "1 were imported before" in out
    assert len(sessions(MemoryStore())) == 2


def test_a_malformed_export_names_the_conversation_and_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = {"title": "No tree here", "create_time": T0, "conversation_id": "c-bad"}
    good = [chatgpt_simple("c-1", "tea", T0), broken, chatgpt_simple("c-3", "jam", T0 + 9)]
    export = write_json(tmp_path / "c.json", good)
    assert main(["import", "--from", "chatgpt", str(export)]) == 1
    err = capsys.readouterr().err
    assert "conversation 2 ('No tree here') was not imported: it has no 'mapping'" in err
    assert len(sessions(MemoryStore())) == 2

    # Cut short in the middle of the fourth conversation: the first three were read.
    text = json.dumps([*good, chatgpt_simple("c-4", "cake", T0 + 20)])
    export.write_text(text[:-40])
    assert main(["import", "--from", "chatgpt", str(export)]) == 1
    err = capsys.readouterr().err
    assert "conversation 4" in err and "importing the file again skips them" in err
    assert len(sessions(MemoryStore())) == 2  # nothing imported twice
    export.write_text(text)
    assert main(["import", "--from", "chatgpt", str(export)]) == 1  # c-bad is still bad
    assert len(sessions(MemoryStore())) == 3


@pytest.mark.parametrize("content", ['{"not": "a list"}', "", "[1, 2"])
def test_what_is_not_an_export_is_refused_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    export = tmp_path / "c.json"
    export.write_text(content)
    assert main(["import", "--from", "claude", str(export)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kept import: ") and "Traceback" not in err
    assert main(["import", "--from", "claude", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err == f"kept import: no file at {tmp_path / 'missing.json'}.\n"


def test_claude_export_with_text_and_content_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write_json(
        tmp_path / "conversations.json",
        [
            {
                "uuid": "5f0c",
                "name": "Sourdough",
                "created_at": "2024-03-02T09:00:00.000000Z",
                "updated_at": "2024-03-02T09:05:00.000000Z",
                "account": {"uuid": "acc"},
                "chat_messages": [
                    {
                        "uuid": "m1",
                        "sender": "human",
                        "text": "My starter smells of acetone.",
                        "content": [{"type": "text", "text": "My starter smells of acetone."}],
                        "created_at": "2024-03-02T09:00:10.000000Z",
                        "attachments": [],
                        "files": [],
                    },
                    {
                        "uuid": "m2",
                        "sender": "assistant",
                        "text": "",
                        "content": [
                            {"type": "text", "text": "Feed it more often."},
                            {"type": "tool_use", "name": "web_search", "input": {}},
                        ],
                        "created_at": "2024-03-02T09:00:20.000000Z",
                        "attachments": [],
                        "files": [],
                    },
                ],
            }
        ],
    )
    assert main(["import", "--from", "claude", str(export)]) == 0
    (journal,) = sessions(MemoryStore())
    assert journal.id.startswith("20240302-090000-")
    assert [(m["role"], m["content"], m["time"]) for m in journal.messages] == [
        ("user", "My starter smells of acetone.", "2024-03-02T09:00:10+00:00"),
        ("assistant", "Feed it more often.", "2024-03-02T09:00:20+00:00"),
    ]


def test_llm_logs_db_becomes_one_session_per_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", "--from", "llm", str(llm_db(tmp_path / "logs.db"))]) == 0
    assert "Imported 2 llm conversations (6 messages)" in capsys.readouterr().out
    regex, haiku = sessions(MemoryStore())
    assert [m["content"] for m in regex.messages] == [
        "A regex for dates?",
        r"\d{4}-\d{2}-\d{2}",
        "And for emails?",
        "Use a library.",
    ]
    assert regex.messages[0]["time"] == "2024-05-01T10:00:00+00:00"
    assert regex.model == "gpt-4o-mini" and haiku.messages[1]["model"] == "claude-3-haiku"
    assert main(["import", "--from", "llm", str(tmp_path / "logs.db")]) == 0
    assert "2 were imported before" in capsys.readouterr().out

    not_llm = tmp_path / "other.db"
    sqlite3.connect(not_llm).execute("CREATE TABLE x (y)").connection.close()
    assert main(["import", "--from", "llm", str(not_llm)]) == 2
    assert "is not llm's logs.db (no such table: responses)" in capsys.readouterr().err
    (tmp_path / "text.db").write_text("not a database at all, just some text " * 20)
    assert main(["import", "--from", "llm", str(tmp_path / "text.db")]) == 2
    assert "is not llm's logs.db" in capsys.readouterr().err


def test_the_array_is_read_in_pieces_whatever_their_size(monkeypatch: pytest.MonkeyPatch) -> None:
    values = [{"text": "é" * 5000, "n": 1}, {"text": 'x"y\\z', "n": 2}, [], {"n": 4}]
    text = "\ufeff [ " + " ,\n ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"
    monkeypatch.setattr(json_array_module, "READ_SIZE", 7)
    assert [v for _, v in json_array(io.StringIO(text), "x.json")] == values
    with pytest.raises(ExportError, match="conversation 2 is not valid JSON"):
        list(json_array(io.StringIO('[{"a": 1}, {"a": nope}, {"a": 3}]'), "x.json"))


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch)
    fake.default = tool_call("save_memory", nothing_new("We talked."))
    return fake


def test_consolidate_dry_run_then_oldest_first_with_progress(
    configured: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newest, oldest = (
        chatgpt_simple("c-2", "jam", T0 + 86_400 * 40),
        chatgpt_simple("c-1", "tea", T0),
    )
    export = write_json(tmp_path / "c.json", [newest, oldest])
    main(["import", "--from", "chatgpt", str(export)])
    capsys.readouterr()
    assert main(["consolidate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 sessions (4 messages) are pending." in out and "Estimated: " in out
    assert "$" in out and configured.requests == []
    assert main(["consolidate"]) == 0
    err = capsys.readouterr().err
    assert "1/2 sessions" in err and "2/2 sessions" in err and "so far" in err
    history = MemoryStore().history_path.read_text()
    assert history.index("[2023-11-1") < history.index("[2023-12-2")  # oldest first


def test_consolidate_stopped_by_ctrl_c_goes_on_next_time(
    configured: FakeProvider,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.cli import imports as cli_import

    export = write_json(
        tmp_path / "c.json", [chatgpt_simple(f"c-{i}", f"w{i}", T0 + i * 999) for i in range(3)]
    )
    main(["import", "--from", "chatgpt", str(export)])
    seen = cli_import.Progress.__call__

    def interrupted(self: cli_import.Progress, result: Consolidation) -> None:
        seen(self, result)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_import.Progress, "__call__", interrupted)
    assert main(["consolidate"]) == 130
    assert "Stopped after 1 of 3 sessions; nothing is lost" in capsys.readouterr().err
    assert len(MemoryStore().pending_sessions()) == 2
    monkeypatch.setattr(cli_import.Progress, "__call__", seen)
    assert main(["consolidate"]) == 0
    assert MemoryStore().pending_sessions() == []
    assert MemoryStore().history_path.read_text().count("We talked.") == 3


def test_a_dry_run_with_no_model_to_save_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write_json(tmp_path / "c.json", [chatgpt_simple("c-1", "tea", T0)])
    main(["import", "--from", "chatgpt", str(export)])
    capsys.readouterr()
    assert main(["consolidate", "--dry-run"]) == 1  # no key, no local model
    assert "no model can save memory now" in capsys.readouterr().out


def claude_export() -> list[dict[str, Any]]:
    return [
        {
            "uuid": "c1",
            "name": "Bread",
            "created_at": "2024-03-02T09:00:00Z",
            "chat_messages": [{"sender": "human", "text": "Hi", "created_at": "2024-03-02T09:00Z"}],
        }
    ]


@pytest.mark.parametrize(
    ("given", "export", "found"),
    [
        (None, "chatgpt", "a ChatGPT export: `kept import --from chatgpt "),
        (None, "claude", "a Claude.ai export: `kept import --from claude "),
        (None, "llm", "llm's logs.db: `kept import --from llm "),
        ("claude", "chatgpt", "a ChatGPT export: `kept import --from chatgpt "),
        ("chatgpt", "claude", "a Claude.ai export: `kept import --from claude "),
    ],
)
def test_an_export_imported_as_something_else_is_named_with_the_from_that_imports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, export: str, found: str
) -> None:
    if export == "llm":
        path = llm_db(tmp_path / "logs.db")
    else:
        value = [chatgpt_simple("c-1", "tea", T0)] if export == "chatgpt" else claude_export()
        path = write_json(tmp_path / "conversations.json", value)
    argv = ["import", *(["--from", given] if given else []), str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"kept import: {path} is {found}{path}` imports it.\n"
    assert MemoryStore().open_sessions() == []  # nothing imported
    assert main(["import", "--from", export, str(path)]) in (0, 1)  # the suggestion works
    assert MemoryStore().open_sessions()
