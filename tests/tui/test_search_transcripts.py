"""Every word said is found: `kept memory grep`, /grep and search_history search finished
transcripts too, name session, date and role, newest first, within --since/--until."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

from app.cli.main import main
from app.screens.search import SearchScreen
from app.screens.transcript import TranscriptScreen
from memory import MemoryStore
from memory.message import Message
from memory.recall.search import Pattern, Scope, grep, run_search_tool
from tests.support import make_app, pending_session


def finished(store: MemoryStore, messages: list[Message], when: str) -> str:
    """A consolidated session begun at `when` (YYYY-MM-DD), settled in sessions/done/."""
    journal = store.new_session("gpt-4.1-mini")
    for message in messages:
        journal.append({**message, "time": f"{when}T10:00:00+00:00"})
    segment = journal.mark_pending(close=True)
    assert segment is not None
    journal.mark_consolidated(segment, "gpt-4.1-mini")
    store.settle(journal)
    # Its id says when it began, as a journal written that day would be named.
    target = store.done_dir / f"{when.replace('-', '')}-100000-{journal.id[-6:]}.jsonl"
    journal.path.rename(target)
    return target.stem


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore().ensure()
    store.history_path.write_text("[2026-11-20 10:00] Talked about the quokka trip.\n\n")
    return store


def test_grep_finds_words_in_finished_transcripts_naming_session_date_role(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    old = finished(
        store,
        [
            {"role": "user", "content": 'My cat is called "Quokka"\nreally'},
            {"role": "assistant", "content": "A fine name."},
        ],
        "2026-03-01",
    )
    new = finished(store, [{"role": "user", "content": "Another quokka photo"}], "2026-10-01")
    assert main(["memory", "grep", "-i", "quokka"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("HISTORY.md:1:")
    assert out[1].startswith(f"sessions/this-machine/done/{new}.jsonl:2:[2026-10-01 ")
    assert out[1].endswith("] user: Another quokka photo")
    assert out[2].startswith(f"sessions/this-machine/done/{old}.jsonl:2:[2026-03-01 ")
    assert out[2].endswith('] user: My cat is called "Quokka"')  # the line that matched
    assert len(out) == 3

    # A literal with a quote is found although the journal escapes it.
    assert main(["memory", "grep", 'called "Quokka"']) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def test_keys_times_and_models_of_a_journal_are_never_hits(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    finished(store, [{"role": "user", "content": "hello"}], "2026-03-01")
    for word in ("role", "gpt-4.1-mini", "2026-03-01", "consolidated"):
        assert main(["memory", "grep", word]) == 1, word
    assert main(["memory", "grep", "-E", "rol+e"]) == 1
    assert capsys.readouterr().out == ""


def test_since_and_until_keep_matches_dated_within_them(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    finished(store, [{"role": "user", "content": "quokka in March"}], "2026-03-01")
    finished(store, [{"role": "user", "content": "quokka in October"}], "2026-10-01")
    assert main(["memory", "grep", "quokka", "--since", "2026-10-01"]) == 0
    out = capsys.readouterr().out
    assert "October" in out and "March" not in out and "HISTORY.md" in out
    assert main(["memory", "grep", "quokka", "--until", "2026-03-31"]) == 0
    out = capsys.readouterr().out
    assert "March" in out and "October" not in out and "HISTORY.md" not in out
    assert main(["memory", "grep", "quokka", "--since", "2026-04", "--until", "2026-09"]) == 1
    assert main(["memory", "grep", "quokka", "--since", "last week"]) == 2
    assert "--since takes a date" in capsys.readouterr().err


def test_the_search_history_tool_quotes_what_was_said_but_not_the_current_session(
    store: MemoryStore,
) -> None:
    old = finished(
        store, [{"role": "assistant", "content": "Your quokka is 3 years old."}], "2026-03-01"
    )
    live = store.new_session("gpt-4.1-mini")
    live.append({"role": "user", "content": "How old is my quokka?"})
    answer = run_search_tool(store, json.dumps({"pattern": "quokka"}), exclude=(live.id,))
    assert "Talked about the quokka trip." in answer
    assert f"session {old}, assistant: Your quokka is 3 years old." in answer
    assert "How old" not in answer


async def test_grep_in_the_app_lists_transcript_hits_and_opens_the_session(
    store: MemoryStore,
) -> None:
    journal = pending_session(store)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.press(*"/grep Enchantée", "enter")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        results = screen.query_one("#results", OptionList)
        assert results.option_count == 1
        assert f"session {journal.id}" in str(results.get_option_at_index(0).prompt)
        results.focus()
        results.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.marked == [3]  # the fourth message: the assistant's greeting


def test_matches_in_a_journal_are_checked_against_the_text(store: MemoryStore) -> None:
    journal = store.new_session(None)
    journal.append({"role": "user", "content": "tab\there"})
    # The JSON form is tab\\there: a regex for a backslash must not match the escape.
    assert list(grep(store, Pattern(r"\\", regex=True))) == []
    assert [m.text for m in grep(store, Pattern("tab\there"))] == ["tab\there"]


def test_the_command_line_searches_the_store_s_own_folders() -> None:
    from memory.recall.search import Places

    store = MemoryStore()
    places = Places(store.root)
    for name in ("history_path", "archive_dir", "sessions_dir", "done_dir"):
        assert getattr(places, name) == getattr(store, name), name


def test_kept_memory_grep_imports_only_what_a_search_needs(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom app.cli.main import main\nmain(['memory', 'grep', 'x'])\n"
        "print(sorted(m for m in ('memory.data.store', 'catalog', 'textual', 'litellm') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_search_history_tool_never_quotes_a_private_session(store: MemoryStore) -> None:
    private = store.new_session("gpt-4.1-mini", private=True)
    private.append({"role": "user", "content": "my secret quokka plan"})
    answer = run_search_tool(store, json.dumps({"pattern": "secret quokka"}))
    assert answer == "No earlier session mentions 'secret quokka'."
    assert list(grep(store, Pattern("secret quokka"))) == []  # nor the user's own search
    assert [m.session for m in grep(store, Pattern("secret quokka"), Scope(private=True))] == [
        private.id
    ]
