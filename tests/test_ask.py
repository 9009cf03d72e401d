"""`kept ask` from the shell, through the fake provider: streamed to stdout with MEMORY.md
in the prompt, journaled and saved to memory like any session, exit codes 0 / 1 / 2."""

from __future__ import annotations

import io
import time

import pytest

from app.cli import main
from memory import LiveSession, MemoryStore
from tests.fakes.provider import FakeProvider, http_error, text, tool_call
from tests.support import configure_fake, nothing_new


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, '[app]\nmodel = "gpt-4.1-mini"\n')
    fake.default = tool_call("save_memory", nothing_new("Asked about tea from the shell."))
    MemoryStore().ensure().write_memory("- Name: Ana\n- Drinks green tea\n")
    return fake


def wait_until(condition, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def only_session(store: MemoryStore):
    found = [*store.sessions_dir.glob("*.jsonl"), *store.done_dir.glob("*.jsonl")]
    assert len(found) == 1, found
    return store.find_session(found[0].stem)


def test_ask_streams_the_answer_with_memory_and_saves_the_exchange(configured, capsys) -> None:
    configured.script("gpt-4.1-mini", text("Green tea, Ana.", chunks=5))
    assert main(["ask", "What", "do I drink?", "--timing"]) == 0
    out, err = capsys.readouterr()
    assert out == "Green tea, Ana.\n"  # piped: plain text, no escape sequences
    assert "first token after" in err
    chat = configured.requests[0]
    assert chat.stream and "- Drinks green tea" in chat.body["messages"][0]["content"]
    assert chat.body["messages"][-1] == {"role": "user", "content": "What\n\ndo I drink?"}
    store = MemoryStore()
    journal = only_session(store)
    assert [m["role"] for m in journal.messages] == ["user", "assistant"]
    # Saved to memory in the background, like a session ended with /new.
    wait_until(
        lambda: store.find_session(journal.id).state == "consolidated", "the exchange to be saved"
    )
    assert "Asked about tea from the shell." in store.history_path.read_text()


def test_ask_reads_stdin_for_dash(configured, capsys, monkeypatch) -> None:
    configured.script("gpt-4.1-mini", text("Three lines."))
    monkeypatch.setattr("sys.stdin", io.StringIO("line one\nline two\nline three\n"))
    assert main(["ask", "-", "How many lines?", "--no-save"]) == 0
    assert capsys.readouterr().out == "Three lines.\n"
    sent = configured.requests[0].body["messages"][-1]["content"]
    assert sent == "line one\nline two\nline three\n\nHow many lines?"


def test_usage_errors_exit_2_in_one_sentence(configured, capsys, monkeypatch) -> None:
    assert main(["ask", "-m", "gpt-9", "hello"]) == 2
    assert "Unknown model 'gpt-9'" in capsys.readouterr().err
    assert main(["ask", "   "]) == 2
    assert "the question is empty" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["ask", "-"]) == 2
    assert main(["ask", "--private", "--continue", "x"]) == 2
    assert "cannot --continue" in capsys.readouterr().err
    assert configured.requests == []


def test_no_model_answering_exits_1_and_keeps_the_question(configured, capsys) -> None:
    configured.default = http_error(500)
    assert main(["ask", "-m", "gpt-4.1-mini", "Anyone there?", "--no-save"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no model could answer" in err
    journal = only_session(MemoryStore())
    assert journal.messages[0]["content"] == "Anyone there?" and journal.state == "pending"


def test_a_model_failing_mid_stream_keeps_what_arrived_and_says_so(configured, capsys) -> None:
    from tests.fakes.provider import cut

    configured.script("gpt-4.1-mini", cut(after_chunks=2))
    configured.set_default("claude-haiku-4-5", text("The whole answer."))
    assert main(["ask", "-m", "gpt-4.1-mini", "Hi", "--no-save"]) == 1
    out, err = capsys.readouterr()
    assert out.strip() and "The whole answer." not in out  # the partial reply, not a new one
    assert "kept ask: the reply was cut off (gpt-4.1-mini: the stream broke off" in err
    from memory.assistant import CUT_OFF
    from memory.journal import load

    (path,) = MemoryStore().sessions_dir.rglob("*.jsonl")
    reply = load(path).messages[-1]
    assert reply["role"] == "assistant" and reply["content"].endswith(CUT_OFF)


def test_private_asks_leave_nothing(configured, capsys) -> None:
    configured.script("gpt-4.1-mini", text("Off the record."))
    assert main(["ask", "--private", "a secret"]) == 0
    store = MemoryStore()
    assert list(store.sessions_dir.glob("*.jsonl")) == []
    assert len(configured.requests) == 1  # no consolidation


def test_continue_joins_the_live_session_unless_a_window_has_it(configured, capsys) -> None:
    store = MemoryStore()
    live = LiveSession.start(store, "gpt-4.1-mini")
    live.append({"role": "user", "content": "My bike is red."})
    live.append({"role": "assistant", "content": "Noted.", "model": "gpt-4.1-mini"})
    assert main(["ask", "--continue", "What colour is it?"]) == 2  # a window holds it
    assert "open in a Kept window" in capsys.readouterr().err
    live.release()

    configured.script("gpt-4.1-mini", text("Red."))
    assert main(["ask", "--continue", "What colour is it?"]) == 0
    sent = [m["content"] for m in configured.requests[-1].body["messages"][1:]]
    assert sent == ["My bike is red.", "Noted.", "What colour is it?"]
    journal = store.find_session(live.id)
    assert journal.state == "active" and len(journal.messages) == 4  # still live, not saved
    assert len(configured.requests) == 1
