"""`kept import`, `kept consolidate`, `kept memory show|path`, through the fake provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main
from memory import MemoryStore
from tests.fakes.provider import FakeProvider, http_error, text, tool_call
from tests.support import SAMPLE_MESSAGES, configure_fake, save_args


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    """config.toml pointing every gateway at the fake, fast retries, keys in the env."""
    configure_fake(fake, monkeypatch)
    return fake


def transcript(tmp_path: Path, *extra: bytes) -> Path:
    path = tmp_path / "chat.jsonl"
    with open(path, "wb") as f:
        for message in SAMPLE_MESSAGES:
            f.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        for line in extra:
            f.write(line)
    return path


def test_import_makes_a_pending_session_and_names_damaged_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = transcript(tmp_path, b'{"role": "user", "content": "torn')
    assert main(["import", str(path)]) == 0
    out, err = capsys.readouterr()
    session_id = out.strip()
    journal = MemoryStore().find_session(session_id)
    assert journal.state == "pending" and len(journal.messages) == 5
    assert f"{path}:6: skipped" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no file at "),
        (b"", "holds no message to import"),
        (b"garbage\n", "holds no message to import"),
    ],
)
def test_import_rejects_what_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "x.jsonl"
    if content is not None:
        path.write_bytes(content)
    assert main(["import", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_file_is_named_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["import"], ["import", "--from", "chatgpt"], ["import", "--from", "llm"]):
        assert main([*argv, str(tmp_path / "nope.json")]) == 2
        assert capsys.readouterr().err == f"kept import: no file at {tmp_path / 'nope.json'}.\n"
    assert main(["import", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"kept import: {tmp_path} is a folder: name the file in it.\n"


def test_an_unknown_option_is_told_the_usage_of_its_own_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv, usage in (
        (["models", "--bogus"], "usage: kept models "),
        (["memory", "grep", "--bogus", "x"], "usage: kept memory grep "),
        (["ask", "--bogus", "hi"], "usage: kept ask "),
    ):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.startswith(usage), err
        assert err.rstrip().endswith("error: unrecognized arguments: --bogus")


def test_help_says_a_bare_kept_opens_the_chat(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "`kept` with no command opens the chat." in " ".join(capsys.readouterr().out.split())


def test_tidy_of_an_empty_memory_names_the_file_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "tidy"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "kept memory tidy: MEMORY.md was not tidied: it is empty, so there is nothing to tidy.\n"
    )


def test_consolidate_prints_each_attempt_and_exits_0_when_saved(
    configured: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.set_default("llama-3.3-70b-versatile", text("A nice chat about Zürich."))
    configured.set_default("qwen/qwen3-32b", http_error(500))
    configured.default = tool_call("save_memory", save_args())
    main(["import", str(transcript(tmp_path))])
    session_id = capsys.readouterr().out.strip()
    assert main(["consolidate"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "  llama-3.3-70b-versatile → did not call save_memory"
    assert out[1].startswith("  qwen3-32b → server error: Internal server error")
    assert out[2].startswith("  llama-4-scout-17b-16e-instruct ✓ ")
    assert out[3].startswith(f"Session {session_id}: saved by llama-4-scout-17b-16e-instruct")
    assert main(["memory", "show"]) == 0
    assert capsys.readouterr().out == "# About the user\n- Name: Ana\n"


def test_consolidate_exits_1_and_keeps_the_session_when_every_model_fails(
    configured: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.default = http_error(529)
    main(["import", str(transcript(tmp_path))])
    session_id = capsys.readouterr().out.strip()
    assert main(["consolidate", session_id]) == 1
    out = capsys.readouterr().out
    assert "llama-3.3-70b-versatile → the provider is overloaded (retrying)" in out
    assert "claude-haiku-4-5 → the provider is overloaded" in out
    assert f"Session {session_id}: still pending, nothing lost." in out
    assert "Next retry after" in out
    assert MemoryStore().find_session(session_id).state == "pending"


def test_consolidate_leaves_out_gateways_without_keys(
    configured: FakeProvider,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GROQ_API_KEY")
    configured.default = tool_call("save_memory", save_args())
    main(["import", str(transcript(tmp_path))])
    capsys.readouterr()
    assert main(["consolidate"]) == 0
    out = capsys.readouterr().out
    # The chain is composed from the models that can answer: no request, and no noise.
    assert out.splitlines()[0].startswith("  gpt-4.1-mini ✓")
    assert "saved by gpt-4.1-mini" in out and "Groq" not in out
    assert configured.count(gateway="groq") == 0


def test_consolidate_with_nothing_pending_or_an_unknown_id(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["consolidate"]) == 0
    assert "Nothing to consolidate" in capsys.readouterr().out
    assert main(["consolidate", "20990101-000000-abcdef"]) == 2
    assert "No session '20990101-000000-abcdef'" in capsys.readouterr().err


def test_memory_path_and_empty_memory(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(MemoryStore().memory_path)
    assert main(["memory", "show"]) == 0
    assert "MEMORY.md is empty" in capsys.readouterr().err


def test_memory_trust_prints_each_models_record_and_rule(
    configured: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    invented = {"history_entry": "A chat.", "edits": [{"op": "add", "line": "Owns a yacht"}]}
    configured.set_default("llama-3.3-70b-versatile", tool_call("save_memory", invented))
    configured.default = tool_call("save_memory", save_args())
    main(["import", str(transcript(tmp_path))])
    assert main(["consolidate"]) == 0
    capsys.readouterr()
    assert main(["memory", "trust"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    head, next_ = rows["llama-3.3-70b-versatile"], rows["qwen3-32b"]
    assert head.split()[1:3] == ["0", "1"]
    assert "waits for your review: recent edits were refused (0 accepted, 1 refused" in head
    assert next_.split()[1:3] == ["1", "0"]
    assert "saved at once: a hosted model with no refused edits" in next_
