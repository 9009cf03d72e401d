"""Attachments: reading, measuring, refusing, keeping and collecting real files."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from app.words.attachments import does_not_fit
from memory.chat.attachments import (
    AttachmentError,
    AttachmentLimits,
    collect,
    keep,
    mention,
    read_attachment,
    read_stdin_bytes,
    stored_path,
)
from memory.data.files import append_line
from memory.data.store import MemoryStore
from memory.settings import parse_memory_settings
from tests.attach_files import bomb_pdf, png, text_pdf


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def named(journal: Path, record: dict[str, object]) -> None:
    """A journal line naming the attachment, as a sent message's is written."""
    message = {"role": "user", "content": "look", "attachments": [record]}
    append_line(journal, json.dumps(message, ensure_ascii=False, separators=(",", ":")))


def refused(path: Path, limits: AttachmentLimits | None = None) -> str:
    with pytest.raises(AttachmentError) as caught:
        read_attachment(path, limits)
    sentence = str(caught.value)
    assert sentence.count(". ") == 0 and sentence.endswith("."), sentence  # one sentence
    assert "Traceback" not in sentence
    return sentence


# --- text ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("naïve café\n".encode(), "naïve café\n"),
        (b"\xef\xbb\xbfwith a BOM\n", "with a BOM\n"),
        ("utf-16 ünïcode\n".encode("utf-16"), "utf-16 ünïcode\n"),
        ("utf-16 big\n".encode("utf-16-be").join([b"\xfe\xff", b""]), "utf-16 big\n"),
        ("latin-1 café\n".encode("latin-1"), "latin-1 café\n"),
    ],
)
def test_text_encodings_are_detected(tmp_path: Path, data: bytes, expected: str) -> None:
    attachment = read_attachment(write(tmp_path, "notes.txt", data))
    assert attachment.kind == "text"
    assert attachment.text == expected
    assert attachment.size == len(data)
    assert attachment.data == data
    assert attachment.tokens >= len(expected) // 4


def test_binary_is_refused_in_one_sentence(tmp_path: Path) -> None:
    path = write(tmp_path, "program.bin", bytes(range(256)) * 4)
    assert "program.bin looks binary" in refused(path)


def test_label_and_record(tmp_path: Path) -> None:
    path = write(tmp_path, "report.pdf", text_pdf(["one", "two", None]))
    attachment = read_attachment(path)
    assert attachment.kind == "pdf" and attachment.pages == 3
    label = attachment.label()
    assert label.startswith("report.pdf · 3 pages · ") and label.endswith(" tokens")
    record = attachment.record()
    assert record["name"] == "report.pdf" and record["sha256"] == attachment.digest
    assert record["pages"] == 3 and record["notices"] == ["page 3 of report.pdf has no text layer."]
    assert mention(record).startswith("[attached: report.pdf, 3 pages, ")


# --- PDFs ------------------------------------------------------------------------------------


def test_pdf_text_layer_and_a_page_without_one(tmp_path: Path) -> None:
    path = write(tmp_path, "report.pdf", text_pdf(["Quarterly revenue rose", None]))
    attachment = read_attachment(path)
    assert attachment.pages == 2
    assert attachment.text is not None and "Quarterly revenue rose" in attachment.text
    assert attachment.notices == ("page 2 of report.pdf has no text layer.",)


def test_pdf_written_by_pypdf_without_text(tmp_path: Path) -> None:
    from io import BytesIO

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    writer.add_blank_page(612, 792)
    out = BytesIO()
    writer.write(out)
    attachment = read_attachment(write(tmp_path, "scan.pdf", out.getvalue()))
    assert attachment.pages == 2
    assert attachment.notices == (
        "scan.pdf has no text layer (a scan?): the model sees only its name.",
    )


def test_pdf_with_too_many_pages_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "book.pdf", text_pdf(["a", "b", "c"]))
    sentence = refused(path, AttachmentLimits(pdf_max_pages=2))
    assert "book.pdf has 3 pages, more than the 2" in sentence


def test_encrypted_pdf_is_refused(tmp_path: Path) -> None:
    from io import BytesIO

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    out = BytesIO()
    writer.write(out)
    assert "locked.pdf is an encrypted PDF" in refused(
        write(tmp_path, "locked.pdf", out.getvalue())
    )


def test_pdf_bomb_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "bomb.pdf", bomb_pdf())
    assert path.stat().st_size < 1_000_000
    assert "bomb.pdf expands to far more than its size" in refused(path)


def test_damaged_pdf_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.pdf", b"%PDF-1.4\n" + os.urandom(2000))
    sentence = refused(path)
    assert sentence.startswith(str(path))


# --- images ----------------------------------------------------------------------------------


def test_png_is_an_image(tmp_path: Path) -> None:
    attachment = read_attachment(write(tmp_path, "shot.png", png()))
    assert (attachment.kind, attachment.media_type, attachment.text) == ("image", "image/png", None)


def test_image_over_its_limit_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "big.png", png() + bytes(5_000))  # bytes after IEND: still a PNG
    sentence = refused(path, AttachmentLimits(image_max_bytes=1_000, text_max_bytes=1_000))
    assert "more than the" in sentence and "for an image" in sentence


# --- hostile paths ---------------------------------------------------------------------------


def test_a_folder(tmp_path: Path) -> None:
    assert "is a folder" in refused(tmp_path)


def test_a_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = threading.Event()
    result: list[str] = []

    def run() -> None:
        result.append(refused(fifo))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(60), "reading a FIFO blocked"
    assert "is not a regular file" in result[0]


def test_a_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    assert "leads back to itself" in refused(loop)


def test_a_missing_file(tmp_path: Path) -> None:
    assert "does not exist" in refused(tmp_path / "nowhere.txt")


def test_a_2_gb_sparse_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with open(path, "wb") as f:
        f.truncate(2 * 1024**3)
    assert "huge.log is 2048.0 MB, more than the" in refused(path)


def test_a_file_whose_size_changes_while_read(tmp_path: Path) -> None:
    # /proc says 0 bytes and then gives more: the same as a file written while it is read.
    assert "changed while Kept read it" in refused(Path("/proc/self/status"))


def test_stdin_bytes(tmp_path: Path) -> None:
    attachment = read_stdin_bytes(b"piped in\n")
    assert (attachment.name, attachment.kind, attachment.text) == ("stdin", "text", "piped in\n")
    with pytest.raises(AttachmentError, match="stdin looks binary"):
        read_stdin_bytes(b"\x00\x01\x02")


# --- before sending --------------------------------------------------------------------------


def test_does_not_fit(tmp_path: Path) -> None:
    attachment = read_attachment(write(tmp_path, "big.txt", b"word " * 10_000))
    assert does_not_fit([attachment], "hi", 200_000) is None
    sentence = does_not_fit([attachment], "what is this?", 8_000)
    assert sentence is not None and "big.txt" in sentence and "8,000-token window" in sentence


# --- keeping ---------------------------------------------------------------------------------


def test_keep_stores_once_by_content_and_collect_spares_what_a_journal_names(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path / "data").ensure()
    first = read_attachment(write(tmp_path, "a.txt", b"same bytes\n"))
    second = read_attachment(write(tmp_path, "b.txt", b"same bytes\n"))
    record = keep(store, first)
    again = keep(store, second)
    assert record["sha256"] == again["sha256"]
    assert stored_path(store, record).read_bytes() == b"same bytes\n"
    assert len(list((store.root / "attachments").iterdir())) == 1

    journal = store.new_session("gpt-4.1-mini")
    named(journal.path, record)
    assert collect(store, grace=0) == 0
    journal.path.unlink()
    assert collect(store) == 0  # just stored: its message may be on its way
    assert collect(store, grace=0) == 1
    assert not stored_path(store, record).exists()


def test_private_attachments_are_kept_apart_and_go_with_the_session(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data").ensure()
    attachment = read_attachment(write(tmp_path, "secret.txt", b"off the record\n"))
    journal = store.new_session("gpt-4.1-mini", private=True)
    record = keep(store, attachment, private=True)
    named(journal.path, record)
    path = stored_path(store, record)
    assert path.parent.name == "private" and path.exists()
    assert collect(store, grace=0) == 0
    store.discard(journal)
    assert collect(store, grace=0) == 1
    assert not path.exists()


def test_attachment_limits_come_from_their_own_table() -> None:
    data = {"attachments": {"pdf_max_pages": 0, "image_max_bytes": 2_000_000}}
    settings, problems = parse_memory_settings(data, "config.toml")
    assert settings.attachments.image_max_bytes == 2_000_000
    assert settings.attachments.pdf_max_pages == AttachmentLimits().pdf_max_pages
    assert problems == [
        "config.toml: [attachments] pdf_max_pages must be a whole number from 1 to 10000, not 0."
    ]


def test_a_kept_pdf_is_read_again_in_a_new_process(tmp_path: Path) -> None:
    from memory.chat import attachments

    store = MemoryStore(tmp_path / "data").ensure()
    path = write(tmp_path, "report.pdf", text_pdf(["Revenue rose", None]))
    record = keep(store, read_attachment(path))
    attachments.storage._text_cache.clear()  # as in a process that did not read it
    sent = attachments.expand(store, {"attachments": [record]}, {"role": "user", "content": "?"})
    assert (
        sent["content"][1]["text"]
        == '<file name="report.pdf">\n--- page 1 ---\nRevenue rose\n</file>'
    )


def test_a_text_file_past_the_text_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    with open(path, "wb") as f:
        f.truncate(3_000_000)  # sparse: only its size says how big it is
    sentence = refused(path, AttachmentLimits(text_max_bytes=2_000_000))
    assert sentence == (
        f"{path} is 2.9 MB, more than the 1.9 MB Kept attaches for text; attach a part of "
        "it, or raise the limit in config.toml's [attachments]."
    )
