"""`kept ask -a PATH`: files attached from the shell, through the fake provider."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from memory import MemoryStore
from memory.chat.attachments import stored_path
from tests.attach_files import png, text_pdf
from tests.fakes.provider import FakeProvider, text
from tests.support import configure_fake


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, '[app]\nmodel = "gpt-4.1-mini"\n')
    return fake


def sent_parts(fake: FakeProvider) -> list[dict[str, object]]:
    content = fake.requests[0].body["messages"][-1]["content"]
    assert isinstance(content, list)
    return content


def test_ask_with_files_and_stdin(
    configured: FakeProvider,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    (tmp_path / "report.pdf").write_bytes(text_pdf(["Revenue rose nine percent"]))
    (tmp_path / "shot.png").write_bytes(png())
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"piped log line\n")))
    configured.script("gpt-4.1-mini", text("Nine percent."))
    code = main(
        ["ask", "-a", str(tmp_path / "report.pdf"), "-a", "-", "-a", str(tmp_path / "shot.png"),
         "How much?", "--no-save"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().out == "Nine percent.\n"
    parts = sent_parts(configured)
    assert parts[0] == {"type": "text", "text": "How much?"}
    assert "Revenue rose nine percent" in str(parts[1]["text"])
    assert str(parts[2]["text"]).startswith('<file name="stdin">\npiped log line')
    assert parts[3]["type"] == "image_url"
    store = MemoryStore()
    (journal,) = store.open_sessions()
    records = journal.messages[0]["attachments"]
    assert [r["name"] for r in records] == ["report.pdf", "stdin", "shot.png"]
    assert all(stored_path(store, r).is_file() for r in records)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes(b"\x00\x01binary"), "looks binary"),
        (lambda p: None, "does not exist"),
    ],
)
def test_a_file_that_cannot_be_attached_is_one_sentence_and_nothing_is_asked(
    configured: FakeProvider,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    make: Callable[[Path], object],
    said: str,
) -> None:
    path = tmp_path / "thing"
    make(path)
    assert main(["ask", "-a", str(path), "What is it?"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kept ask: {path} ") and said in err
    assert err.strip().count(". ") == 0 and "Traceback" not in err
    assert configured.requests == []
    assert MemoryStore().open_sessions() == []


def test_an_image_to_a_model_that_cannot_see_names_one_that_can(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_bytes(png())
    assert (
        main(["ask", "-m", "llama-3.1-8b-instant", "-a", str(tmp_path / "shot.png"), "What?"]) == 2
    )
    err = capsys.readouterr().err
    assert "Llama 3.1 8B Instant cannot see images; -m " in err and err.strip().endswith("can.")
    assert configured.requests == []


def test_a_file_past_the_window_says_what_to_do(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "huge.txt").write_text("word " * 200_000)  # about 250,000 tokens
    assert (
        main(["ask", "-m", "llama-3.1-8b-instant", "-a", str(tmp_path / "huge.txt"), "Sum up"]) == 2
    )
    err = capsys.readouterr().err
    assert "more than the model can read (131,072-token window)" in err
    assert "-m MODEL" in err
    assert configured.requests == []


def test_stdin_twice_is_a_usage_error(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "-a", "-", "-"]) == 2
    assert "stdin is read once" in capsys.readouterr().err


def test_a_private_ask_deletes_its_attachments(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("the vault code\n")
    configured.script("gpt-4.1-mini", text("Noted."))
    assert main(["ask", "--private", "-a", str(tmp_path / "secret.txt"), "Keep this"]) == 0
    store = MemoryStore()
    assert "the vault code" in str(sent_parts(configured))
    assert list(store.sessions_dir.glob("*.jsonl")) == []
    assert list((store.root / "attachments" / "private").iterdir()) == []
