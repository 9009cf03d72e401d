"""Attachments in the chat: /attach, chips, Backspace and /detach, a pasted path, what is
refused before sending (and kept), and the files a sent message carried, shown again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app import paths
from app.main import KeptApp
from app.screens.chat import WAIT_TO_ATTACH, ChatScreen
from app.screens.transcript import TranscriptScreen
from app.widgets.composer import Chips, Composer
from app.widgets.message import MessageView
from memory.chat.attachments import Attachment, AttachmentLimits
from memory.message import Message
from tests.attach_files import png
from tests.fakes.provider import FakeProvider, hang, text
from tests.support import SMALL, make_app, small_window_entries, until


async def chat_ready(pilot: Pilot[Any]) -> ChatScreen:
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    assert isinstance(pilot.app.screen, ChatScreen)
    return pilot.app.screen


async def type_line(pilot: Pilot[Any], line: str) -> None:
    composer = pilot.app.query_one(Composer)
    composer.insert(line)  # a path holds characters a key name cannot say
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


async def attached(pilot: Pilot[Any], count: int) -> Chips:
    chips = pilot.app.query_one(Chips)
    await until(
        lambda: len(chips.chips) == count and not chips.reading, message=f"{count} attachments read"
    )
    return chips


def notices(app: KeptApp) -> list[str]:
    return [v.text for v in app.screen.query(MessageView) if v.kind in ("notice", "error")]


def user_messages(app: KeptApp) -> list[Message]:
    return [m for m in app.session.messages if m.get("role") == "user"]


async def test_attach_shows_a_chip_then_the_message_carries_it(
    fake: FakeProvider, tmp_path: Path
) -> None:
    fake.set_default("gpt-4.1-mini", text("It is a config file."))
    notes = tmp_path / "my notes.txt"
    notes.write_text("retries = 3\ntimeout = 10\n" * 20)

    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        await type_line(pilot, f"/attach '{notes}'")
        chips = await attached(pilot, 1)
        (chip,) = chips.chips
        label = str(chip.render())
        assert "my notes.txt" in label and "tokens" in label
        await type_line(pilot, "What is this?")
        await screen.reply_finished()
        await pilot.pause()
        (sent,) = user_messages(app)
        assert sent["content"] == "What is this?"
        assert [a["name"] for a in sent["attachments"]] == ["my notes.txt"]
        assert not chips.chips and not chips.display
        (view,) = [v for v in screen.query(MessageView) if v.kind == "user"]
        shown = str(view.query_one(".attachments").render())
        assert shown == f"+ my notes.txt · {notes.stat().st_size} bytes"


async def test_backspace_and_detach_remove_chips(fake: FakeProvider, tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(f"file {name}\n")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await chat_ready(pilot)
        await type_line(pilot, f"/attach {tmp_path}/a.txt {tmp_path}/b.txt {tmp_path}/c.txt")
        chips = await attached(pilot, 3)
        await pilot.press("backspace")  # the composer is empty: the last chip goes
        assert [c.name_shown for c in chips.chips] == ["a.txt", "b.txt"]
        await type_line(pilot, "/detach nope.txt")
        assert notices(app)[-1] == "No attachment is named nope.txt; attached: a.txt, b.txt."
        await type_line(pilot, "/detach a.txt")
        assert [c.name_shown for c in chips.chips] == ["b.txt"]
        await pilot.press(*"hi", "backspace")  # Backspace in text deletes text only
        assert app.query_one(Composer).text == "h"
        assert len(chips.chips) == 1
        app.query_one(Composer).clear()
        await type_line(pilot, f"/attach {tmp_path}/a.txt")
        await attached(pilot, 2)
        await type_line(pilot, "/detach")
        assert not chips.chips and not chips.display


async def test_tab_completes_the_path_after_attach(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "quarterly report.txt").write_text("numbers\n")
    (tmp_path / "queue.txt").write_text("q\n")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await chat_ready(pilot)
        composer = app.query_one(Composer)
        await type_line(pilot, "/attach")  # alone: the path is asked for
        assert composer.text == "/attach "
        box = app.screen.query_one("#suggestions")
        assert str(box.render()).startswith("Type the path of a file to attach")
        assert box.has_class("visible")
        composer.insert("~/q")
        await pilot.press("tab")
        assert composer.text == "/attach ~/qu"
        assert "~/queue.txt" in str(box.render()) and box.has_class("visible")
        await pilot.press("a", "tab")
        assert composer.text == "/attach ~/quarterly\\ report.txt "
        await pilot.press("enter")
        chips = await attached(pilot, 1)
        assert chips.chips[0].name_shown == "quarterly report.txt"


async def test_a_pasted_path_offers_to_attach(fake: FakeProvider, tmp_path: Path) -> None:
    fake.set_default("gpt-4.1-mini", text("Noted."))
    log = tmp_path / "server log.txt"
    log.write_text("error: disk full\n")

    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        composer = app.query_one(Composer)
        composer.insert(log.as_uri())
        await pilot.pause()
        box = screen.query_one("#suggestions")
        assert box.has_class("visible")
        assert str(box.render()) == (
            "Attach server log.txt? Tab attaches it; Enter sends the text as it is."
        )
        await pilot.press("tab")
        chips = await attached(pilot, 1)
        assert composer.text == "" and not box.has_class("visible")
        chips.clear()
        # Enter sends the path as words, not as an unknown /command.
        composer.insert(str(log).replace(" ", "\\ "))
        await pilot.pause()
        assert box.has_class("visible")
        await pilot.press("enter")
        await screen.reply_finished()
        assert user_messages(app)[-1]["content"] == str(log).replace(" ", "\\ ")
        assert not any("Unknown command" in n for n in notices(app))


async def test_too_big_for_the_window_keeps_the_message_and_chips(
    fake: FakeProvider, tmp_path: Path
) -> None:
    from app.words.attachments import does_not_fit

    big = tmp_path / "big.log"
    big.write_text("the same line of a log, over and over again\n" * 2_000)

    app = make_app(fake, model=SMALL, entries=small_window_entries())
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        await type_line(pilot, f"/attach {big}")
        chips = await attached(pilot, 1)
        await type_line(pilot, "Summarise this log")
        expected = does_not_fit(chips.attachments, "Summarise this log", 2000)
        assert expected
        assert notices(app)[-1] == expected
        assert app.query_one(Composer).text == "Summarise this log"
        assert len(chips.chips) == 1
        assert user_messages(app) == [] and not screen.replying
        assert fake.count(model=SMALL) == 0


async def test_an_image_to_a_model_that_cannot_see_names_one_that_can(
    fake: FakeProvider, tmp_path: Path
) -> None:
    from app.words.attachments import vision_model_sentence
    from memory.chat.attachments import can_take

    picture = tmp_path / "screen.png"
    picture.write_bytes(png())

    app = make_app(fake, model="deepseek-chat")
    async with app.run_test() as pilot:
        await chat_ready(pilot)
        assert not can_take("deepseek-chat", {"image"}, app.catalog)
        await type_line(pilot, f"/attach {picture}")
        chips = await attached(pilot, 1)
        await type_line(pilot, "What is on it?")
        assert notices(app)[-1] == vision_model_sentence(app.catalog, "deepseek-chat")
        assert app.query_one(Composer).text == "What is on it?"
        assert len(chips.chips) == 1 and user_messages(app) == []


async def test_a_file_that_cannot_be_attached_is_one_sentence_and_loses_nothing(
    fake: FakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "folder").mkdir()
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    fine = tmp_path / "fine.txt"
    fine.write_text("fine\n")

    app = make_app(fake)

    def grown(count: int) -> Callable[[], bool]:
        return lambda: len(notices(app)) > count

    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        await type_line(pilot, f"/attach {fine}")
        chips = await attached(pilot, 1)
        composer = app.query_one(Composer)
        composer.insert("half a thought")
        for bad in (tmp_path / "folder", binary, tmp_path / "missing.txt"):
            before = len(notices(app))
            screen.action_attach(str(bad))
            await until(grown(before), message="the notice")
            await attached(pilot, 1)
            said = notices(app)[-1]
            assert "Traceback" not in said and "\n" not in said
            assert said.endswith(".") and said.count(". ") == 0, said
        assert composer.text == "half a thought"
        assert [c.name_shown for c in chips.chips] == ["fine.txt"]
        composer.clear()
        await type_line(pilot, "/attach 'unclosed")
        assert "never closed" in notices(app)[-1]


async def test_attachments_wait_for_the_reply_to_end(fake: FakeProvider, tmp_path: Path) -> None:
    """A queued message is journaled as words only: one with attachments is refused while a
    reply is written, and stays in the composer with its chips."""
    fake.set_default("gpt-4.1-mini", hang())
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n")

    app = make_app(fake)
    # The reply must still be waited for when Enter is pressed, however busy the machine.
    assert app.policy is not None
    app.policy = replace(app.policy, attempt_deadline=600.0, stall_timeout=600.0)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        await type_line(pilot, "hello")
        await until(lambda: fake.count(model="gpt-4.1-mini") > 0, message="the request")
        assert screen.replying
        await type_line(pilot, f"/attach {notes}")
        chips = await attached(pilot, 1)
        await type_line(pilot, "and this file")
        assert notices(app)[-1] == WAIT_TO_ATTACH
        assert app.query_one(Composer).text == "and this file"
        assert len(chips.chips) == 1 and app.session.queued == []
        await pilot.press("escape")
        await screen.reply_finished()
        fake.release()


async def test_a_resumed_session_and_its_transcript_show_attachments(fake: FakeProvider) -> None:
    record = {"name": "report.pdf", "kind": "pdf", "size": 31_744, "pages": 12}

    first = make_app(fake)
    async with first.run_test() as pilot:
        await chat_ready(pilot)
        first.session.append({"role": "user", "content": "Read it", "attachments": [record]})
        first.session.append({"role": "user", "content": "", "attachments": [record]})
    again = make_app(fake)
    async with again.run_test() as pilot:
        screen = await chat_ready(pilot)

        def users() -> list[MessageView]:
            return [v for v in screen.query(MessageView) if v.kind == "user"]

        def lines(views: list[MessageView]) -> list[str]:
            # A view's parts are mounted a frame after the view itself: wait for them.
            return [str(w.render()) for v in views for w in v.query(".attachments")]

        line = "+ report.pdf · 12 pages · 31 KB"
        await until(lambda: lines(users()) == [line] * 2, message="the resumed messages")
        messages = again.session.messages
        await again.push_screen(TranscriptScreen("A past session", messages, []))
        transcript = again.screen
        await until(
            lambda: lines(list(transcript.query(MessageView))) == [line] * 2,
            message="the transcript's messages",
        )


def test_a_hand_edited_record_is_still_one_plain_line() -> None:
    from app.widgets.message import attachment_line

    assert attachment_line({"name": "a\nb\x1b[31m.txt", "size": True, "pages": "2"}) == (
        "+ a b.txt"
    )
    assert attachment_line({"size": 2048, "pages": 1}) == "+ file · 1 page · 2 KB"
    assert attachment_line("report.pdf") == "+ (an attachment this journal does not describe)"


async def test_typing_goes_on_while_a_file_is_read(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is read in a worker: the composer takes keys meanwhile, and a message sent
    before the chip is ready is given back, with the chip, not sent without its file."""
    import threading

    import memory.chat.attachments

    fake.set_default("gpt-4.1-mini", text("Read it."))
    report = tmp_path / "report.txt"
    report.write_text("a long report\n")
    reading, release = threading.Event(), threading.Event()
    real = memory.chat.attachments.read_attachment

    def slow_read(path: Path, limits: AttachmentLimits | None = None) -> Attachment:
        reading.set()
        assert release.wait(120), "the test never released the read"
        return real(path, limits)

    monkeypatch.setattr(memory.chat.attachments, "read_attachment", slow_read)

    async def scenario() -> None:
        app = make_app(fake)
        async with app.run_test() as pilot:
            screen = await chat_ready(pilot)
            await type_line(pilot, f"/attach {report}")
            await until(reading.is_set, message="the read to begin")
            chips = app.query_one(Chips)
            assert "reading" in str(chips.chips[0].render())
            await pilot.press(*"Summarise it")
            assert app.query_one(Composer).text == "Summarise it"
            await pilot.press("enter")
            assert notices(app)[-1] == (
                "report.txt is still being read: your message is back in the composer; "
                "press Enter again once its chip shows its size."
            )
            assert app.query_one(Composer).text == "Summarise it"
            assert user_messages(app) == []
            release.set()
            await attached(pilot, 1)
            await pilot.press("enter")
            await screen.reply_finished()
            (sent,) = user_messages(app)
            assert sent["content"] == "Summarise it"
            assert [a["name"] for a in sent["attachments"]] == ["report.txt"]

    try:
        await scenario()
    finally:
        release.set()


async def test_a_reader_that_fails_its_own_way_is_one_sentence_and_no_stuck_chip(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.chat.attachments

    odd = tmp_path / "odd\x1b]0;owned\x07.txt"
    odd.write_text("text\n")
    real = memory.chat.attachments.read_attachment
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n")

    def read(path: Path, limits: AttachmentLimits | None = None) -> Attachment:
        if path.name == "broken.pdf":
            raise RuntimeError("the parser broke")
        return real(path, limits)

    monkeypatch.setattr(memory.chat.attachments, "read_attachment", read)

    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        screen.action_attach(paths.escape(str(odd)))
        chips = await attached(pilot, 1)
        assert str(chips.chips[0].render()).startswith("odd.txt · ")
        screen.action_attach(str(broken))
        await until(lambda: bool(notices(app)), message="the notice")
        await attached(pilot, 1)
        assert notices(app) == ["broken.pdf could not be read (RuntimeError: the parser broke)."]
