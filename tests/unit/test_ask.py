"""`kept ask` from the shell, through the fake provider: streamed to stdout with MEMORY.md
in the prompt, journaled and saved to memory like any session, exit codes 0 / 1 / 2."""

from __future__ import annotations

import io

import pytest

from app.cli.main import main
from memory import LiveSession, MemoryStore
from memory.sessions.journal import Journal
from tests.fakes.provider import FakeProvider, http_error, text, tool_call
from tests.support import configure_fake, nothing_new, until_blocking


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, '[app]\nmodel = "gpt-4.1-mini"\n')
    fake.default = tool_call("save_memory", nothing_new("Asked about tea from the shell."))
    MemoryStore().ensure().write_memory("- Name: Ana\n- Drinks green tea\n")
    return fake


def only_session(store: MemoryStore) -> Journal:
    found = [*store.sessions_dir.glob("*.jsonl"), *store.done_dir.glob("*.jsonl")]
    assert len(found) == 1, found
    return store.find_session(found[0].stem)


def test_ask_streams_the_answer_with_memory_and_saves_the_exchange(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
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
    until_blocking(
        lambda: store.find_session(journal.id).state == "consolidated",
        deadline=90,
        message="the exchange to be saved",
    )
    assert "Asked about tea from the shell." in store.history_path.read_text()


def test_ask_reads_stdin_for_dash(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configured.script("gpt-4.1-mini", text("Three lines."))
    monkeypatch.setattr("sys.stdin", io.StringIO("line one\nline two\nline three\n"))
    assert main(["ask", "-", "How many lines?", "--no-save"]) == 0
    assert capsys.readouterr().out == "Three lines.\n"
    sent = configured.requests[0].body["messages"][-1]["content"]
    assert sent == "line one\nline two\nline three\n\nHow many lines?"


def test_usage_errors_exit_2_in_one_sentence(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["ask", "-m", "gpt-9", "hello"]) == 2
    assert "Unknown model 'gpt-9'" in capsys.readouterr().err
    assert main(["ask", "   "]) == 2
    assert "the question is empty" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["ask", "-"]) == 2
    assert main(["ask", "--private", "--continue", "x"]) == 2
    assert "cannot --continue" in capsys.readouterr().err
    assert configured.requests == []


def shell_sentences(err: str) -> list[str]:
    """The sentences of a `kept ask:` message (backquoted commands hold no sentence end)."""
    import re

    assert err.startswith("kept ask: ") and err.count("\n") == 1, err
    return [s for s in re.split(r"(?<=[.)])\s+(?=[A-Z])", err.strip()) if s]


def test_no_model_answering_exits_1_in_the_shells_words_and_leaves_no_session(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.default = http_error(500)
    assert main(["ask", "-m", "gpt-4.1-mini", "Anyone there?"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("kept ask: no model could answer (gpt-4.1-mini: ")
    assert "/" not in err.replace("http://", "")  # no slash command told to a shell user
    assert len(shell_sentences(err)) <= 3 and err.strip().endswith("Nothing was saved.")
    # No model said anything: nothing waits to be saved to memory, nothing is consolidated.
    store = MemoryStore()
    assert list(store.sessions_dir.glob("*.jsonl")) == [] and store.pending_sessions() == []
    assert all(r.body.get("tools") is None or r.stream for r in configured.requests)


def refused_url() -> str:
    """An address on loopback where nothing listens: the connection is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("local", [False, True], ids=["no-key", "local-server-down"])
def test_with_no_key_and_no_server_it_says_the_shells_next_step_at_once(
    fake: FakeProvider, capsys: pytest.CaptureFixture[str], local: bool
) -> None:
    """Nothing in the chain can be asked: said before any request, in at most three short
    sentences that name the shell's next step, and no session is left behind."""
    from app.settings import config_path

    url = refused_url()
    config = f'[gateways.local]\nbase_url = "{url}"\n\n[[models]]\nid = "smollm2"\n'
    if local:
        config = '[app]\nmodel = "smollm2"\n\n' + config
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(config)
    assert main(["ask", "hello"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "/keys" not in err and "Traceback" not in err
    sentences = shell_sentences(err)
    assert len(sentences) == 3 and len(err) < 250, err
    if local:
        assert f"nothing is listening at {url}" in sentences[0]
        assert sentences[1] == "Start your local server there, then ask again."
    else:
        assert "no key for Anthropic, OpenAI or Google Gemini" in sentences[0]
        assert "`keyring set kept anthropic` (or set ANTHROPIC_API_KEY)" in sentences[1]
    assert sentences[2] == "Nothing was saved."
    store = MemoryStore()
    assert not store.sessions_dir.exists() or list(store.sessions_dir.glob("*.jsonl")) == []
    assert fake.requests == []


def test_a_model_failing_mid_stream_keeps_what_arrived_and_says_so(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakes.provider import cut

    configured.script("gpt-4.1-mini", cut(after_chunks=2))
    configured.set_default("claude-haiku-4-5", text("The whole answer."))
    assert main(["ask", "-m", "gpt-4.1-mini", "Hi", "--no-save"]) == 1
    out, err = capsys.readouterr()
    assert out.strip() and "The whole answer." not in out  # the partial reply, not a new one
    assert "kept ask: the reply was cut off (" in err and "the stream broke off" in err
    from memory.chat.turn import CUT_OFF
    from memory.sessions.journal import load

    (path,) = MemoryStore().sessions_dir.rglob("*.jsonl")
    reply = load(path).messages[-1]
    assert reply["role"] == "assistant" and (reply["content"] or "").endswith(CUT_OFF)


def test_private_asks_leave_nothing(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.script("gpt-4.1-mini", text("Off the record."))
    assert main(["ask", "--private", "a secret"]) == 0
    store = MemoryStore()
    assert list(store.sessions_dir.glob("*.jsonl")) == []
    assert len(configured.requests) == 1  # no consolidation


def test_continue_goes_on_with_the_last_ask_not_the_chat_windows_session(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore()
    chat = LiveSession.start(store, "gpt-4.1-mini")  # the chat window's live session
    chat.append({"role": "user", "content": "Let us talk about gardening."})
    chat.append({"role": "assistant", "content": "Happily.", "model": "gpt-4.1-mini"})
    chat.release()

    configured.script("gpt-4.1-mini", text("Noted: red."))
    assert main(["ask", "--no-save", "My bike is red."]) == 0
    configured.script("gpt-4.1-mini", text("Red."))
    assert main(["ask", "--no-save", "--continue", "What colour is it?"]) == 0
    sent = [m["content"] for m in configured.requests[-1].body["messages"][1:]]
    assert sent == ["My bike is red.", "Noted: red.", "What colour is it?"]
    assert len(store.find_session(chat.id).messages) == 2  # the chat's session untouched
    asks = [j for j in store.open_sessions() if j.id != chat.id]
    assert len(asks) == 1 and asks[0].state == "pending"
    assert [(s.start, s.end) for s in asks[0].pending] == [(0, 2), (2, 4)]

    # While a Kept window has that conversation open, --continue says so and adds nothing.
    window = LiveSession.reopen(store, asks[0].id)
    assert window is not None
    assert main(["ask", "--continue", "And the bell?"]) == 2
    assert f"your last ask (session {asks[0].id}) is open in a Kept window" in (
        capsys.readouterr().err
    )
    window.release()
    assert len(configured.requests) == 2
