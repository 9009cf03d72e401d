"""`kept memory grep|versions|restore`, `kept log`, `kept doctor`."""

from __future__ import annotations

import pytest

from app.cli.main import main
from memory import MemoryStore
from memory.recall.search import Pattern, grep
from tests.fakes.provider import FakeProvider
from tests.support import pending_session


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore().ensure()
    store.archive_dir.joinpath("2026-10.md").write_bytes(
        "[2026-10-02 08:00] Ana likes green tea and Zürich.\n\n".encode()
        + b"[2026-10-05 09:30] Bytes \xff\xfe that are not UTF-8, then tea again.\n\n"
    )
    store.history_path.write_text(
        "# My history\n\n[2026-11-20 10:00] Talked about TEA ceremonies.\nSecond line: "
        "more tea.\n\n[2026-11-21 11:00] Nothing about drinks.\n\n"
    )
    return store


def test_grep_prints_file_line_text_like_grep(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "grep", "-s", "tea"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [  # newest first
        "HISTORY.md:4:Second line: more tea.",
        "history/2026-10.md:3:[2026-10-05 09:30] Bytes \ufffd\ufffd that are not UTF-8, "
        "then tea again.",
        "history/2026-10.md:1:[2026-10-02 08:00] Ana likes green tea and Zürich.",
    ]
    assert "\033[" not in "".join(out)  # no colour when not on a terminal


def test_grep_ignore_case_and_regex(store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "grep", "-i", "TEA"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 4
    assert main(["memory", "grep", "-E", r"Z\w+ch"]) == 0
    assert capsys.readouterr().out.startswith("history/2026-10.md:1:")
    assert main(["memory", "grep", "-i", "-E", "zÜRICH"]) == 0
    assert "Zürich" in capsys.readouterr().out


def test_grep_searches_pending_sessions_too(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = pending_session(store)
    assert main(["memory", "grep", "Enchantée"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"sessions/{store.device}/{journal.id}.jsonl:5:[")
    assert "] assistant: Enchantée, Ana!" in out


def test_grep_no_match_exits_1_and_a_bad_regex_exits_2(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "grep", "coffee"]) == 1
    assert capsys.readouterr().out == ""
    assert main(["memory", "grep", "-E", "(unclosed"]) == 2
    assert "bad regular expression '(unclosed'" in capsys.readouterr().err


def test_matches_know_their_entry_date(store: MemoryStore) -> None:
    matches = list(grep(store, Pattern("more tea")))
    assert [(m.line, m.stamp) for m in matches] == [(4, "2026-11-20 10:00")]
    entry = matches[0].entry(store)
    assert entry is not None and entry.body.endswith("Second line: more tea.")
    assert matches[0].spans == ((13, 21),)


def test_versions_and_restore(capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n- v1\n")
    assert store.save_edit("# Me\n- v2\n", store.read_memory().digest) is None
    assert main(["memory", "versions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["1", "2"]
    assert lines[0].endswith("edited by you") and lines[1].endswith("edited by you")
    assert main(["memory", "restore", "1"]) == 0
    assert "now version 1 again (saved as version 3)" in capsys.readouterr().out
    assert store.memory_path.read_text() == "# Me\n- v1\n"
    assert store.versions()[-1].source == "restore of version 1"
    assert main(["memory", "restore", "9"]) == 2
    assert "There is no version 9" in capsys.readouterr().err


def test_an_edit_over_a_changed_file_is_refused_not_written() -> None:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n")
    base = store.read_memory().digest
    store.memory_path.write_text("# Me\n- changed by Kept meanwhile\n")
    on_disk = store.save_edit("# Me\n- my edit\n", base)
    assert on_disk is not None and "changed by Kept" in on_disk.text
    assert store.memory_path.read_text() == "# Me\n- changed by Kept meanwhile\n"


def test_log_shows_chains_pending_and_figures(capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store)
    records = [
        ("llama-3.3-70b-versatile", "retried", "rate limited", 0.2, 0.0),
        ("llama-3.3-70b-versatile", "failed", "the model failed to call the tool", 0.3, 0.0),
        ("qwen3-32b", "rejected", "did not call save_memory", 1.0, 0.0002),
        ("llama-4-scout-17b-16e-instruct", "skipped", "no key", 0, 0.0),
        ("gpt-4.1-mini", "ok", "", 4.1, 0.0008),
    ]
    for model, outcome, reason, latency, cost in records:
        store.log(
            {
                "session": "s1",
                "segment": "0-4",
                "model": model,
                "outcome": outcome,
                "reason": reason,
                "latency": latency,
                "cost": cost,
            }
        )
    journal.mark_failed(journal.pending[0], "No model in the chain answered")
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert (
        "s1 [0-4] saved: llama-3.3-70b-versatile → the model failed to call the tool → "
        "qwen3-32b → did not call save_memory → gpt-4.1-mini ✓ 4.1 s $0.0008"
    ) in out
    assert f"  {journal.id} [0-5] 5 messages, next retry after" in out
    assert "last failure: No model in the chain answered" in out
    assert "gpt-4.1-mini                            1   100%" in out
    assert "llama-3.3-70b-versatile                 2     0%" in out


def test_doctor_reports_folders_keys_and_config(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.settings import config_path

    MemoryStore().ensure()
    monkeypatch.setenv("GROQ_API_KEY", "gsk-doctor")
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text("[app]\nfont = 'x'\n")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "keyring backend: keyring.backends.fail.Keyring" in out
    assert "problem:" in out and "unknown key 'font'" in out
    assert "mode 700" in out
    assert "gateway groq: key from env" in out
    assert "gsk-doctor" not in out
    assert "pending sessions: 0" in out
    path.write_text("")
    assert main(["doctor"]) == 0


def test_log_shows_each_models_state(capsys: pytest.CaptureFixture[str]) -> None:
    from datetime import datetime

    from catalog import Attempt, Kind, Outcome

    store = MemoryStore().ensure()
    book = store.health()
    for outcome in ("retried", "retried", "failed"):
        book.observe(
            Attempt("llama-3.3-70b-versatile", "groq", Outcome(outcome), Kind.SERVER_ERROR, 500)
        )
    for _ in range(3):
        book.observe(Attempt("gpt-4.1-mini", "openai", Outcome.OK, latency=1.2))
    until = datetime.fromtimestamp(book.get("llama-3.3-70b-versatile").until)
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert "Models now:" in out
    assert f"  llama-3.3-70b-versatile: cooling down until {until:%H:%M} after 3 × 500" in out
    assert "  gpt-4.1-mini: healthy (p95 1.2 s over 3 answers)" in out


def test_log_with_nothing_yet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log"]) == 0
    assert "No consolidation has run yet." in capsys.readouterr().out


def test_doctor_shows_the_consolidation_chain_and_fails_when_nothing_can_answer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    MemoryStore().ensure()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "consolidation chain:\n  ✗ llama-3.3-70b-versatile — no key for Groq\n" in out
    assert "  problem: No model can save memory: add a key with `keyring set kept <gateway>`" in out
    monkeypatch.setenv("GROQ_API_KEY", "gsk-doctor")
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "  ✓ llama-3.3-70b-versatile — Groq key from env\n" in out
    assert "  ✗ gpt-4.1-mini — no key for OpenAI\n" in out


def test_doctor_names_a_local_server_that_does_not_answer(
    capsys: pytest.CaptureFixture[str], fake: FakeProvider
) -> None:
    import socket

    from app.settings import config_path

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    MemoryStore().ensure()
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        f'[gateways.local]\nbase_url = "http://127.0.0.1:{port}/v1"\n\n'
        '[[models]]\nid = "llama3.2"\n\n[app]\nmodel = "llama3.2"\n'
    )
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert (
        f"  ? llama3.2 — your local model; no key needed (http://127.0.0.1:{port}/v1); "
        f"server not reachable: nothing is listening at http://127.0.0.1:{port}/v1/models "
        "(connection refused)"
    ) in out
    assert "problem: No model can save memory now: start your local server" in out
    fake.served = ["llama3.2"]
    path.write_text(path.read_text().replace(f"http://127.0.0.1:{port}/v1", fake.base_url("local")))
    assert main(["doctor"]) == 0
    assert (
        f"  ✓ llama3.2 — your local model; no key needed ({fake.base_url('local')})"
        in capsys.readouterr().out
    )


def test_models_all_shows_the_effective_consolidation_chain(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    assert main(["models", "--all"]) == 0
    out = capsys.readouterr().out
    chain = out.split("Consolidation chain (the models that save memory, in order):\n")[1]
    assert chain.splitlines()[0] == "  ✓ gpt-4.1-mini — OpenAI key from env"
    assert "  ✗ qwen3-32b — no key for Groq" in chain
