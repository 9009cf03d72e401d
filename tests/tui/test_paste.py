"""What the user pastes into the composer (an e-mail, a web page, a dropped file's path) is
journaled as pasted, span by span, so that memory learns only from what they typed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot

from app.main import KeptApp
from app.screens.chat import ChatScreen
from app.widgets.composer import Composer
from memory import LiveSession, MemoryStore
from memory.sessions.journal import load
from tests.fakes.provider import FakeProvider, Step, hold, text
from tests.support import make_app, until

EMAIL = "From: Bob <bob@example.com>\nSubject: Lunch\n\nLet us meet at noon on Friday."


def user_records(path: Path) -> list[dict[str, Any]]:
    """The user messages of the journal at `path`, as the file has them."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("role") == "user"]


def queued_marks(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("mark") == "queued"]


def pasted_parts(record: dict[str, Any]) -> list[str]:
    return [record["content"][start:end] for start, end in record["pasted"]]


async def chat_ready(pilot: Pilot[Any]) -> tuple[ChatScreen, Composer]:
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    return screen, screen.query_one(Composer)


async def paste(composer: Composer, pasted: str) -> None:
    """Paste as a terminal does: one bracketed-paste event, which the app forwards to the
    focused composer (posted to the composer itself, it would bubble back to the app and be
    forwarded to it a second time)."""
    assert composer.has_focus
    before = composer.text
    composer.app.post_message(events.Paste(pasted))
    await until(lambda: composer.text != before, message="the paste to reach the composer")


async def enter_and_reply(pilot: Pilot[Any], screen: ChatScreen) -> None:
    await pilot.press("enter")
    await until(lambda: screen.replying or not screen.query_one(Composer).text, message="Enter")
    await screen.reply_finished()
    await pilot.pause()


def journal_path(app: KeptApp) -> Path:
    return app.session.journal.path


async def test_a_paste_between_typed_words_is_journaled_as_pasted(fake: FakeProvider) -> None:
    fake.default = text("Noted.")
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen, composer = await chat_ready(pilot)
        await pilot.press(*"Remember this: ")
        await paste(composer, EMAIL)
        await pilot.press(*" thanks")
        await enter_and_reply(pilot, screen)
        await pilot.press(*"I like tea")
        await enter_and_reply(pilot, screen)

        pasted, typed = user_records(journal_path(app))
        assert pasted["content"] == f"Remember this: {EMAIL} thanks"
        assert pasted["pasted"] == [[15, 15 + len(EMAIL)]]
        assert pasted_parts(pasted) == [EMAIL]
        assert typed["content"] == "I like tea" and "pasted" not in typed


async def test_what_is_left_of_an_edited_paste_is_still_pasted(fake: FakeProvider) -> None:
    fake.default = text("Noted.")
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen, composer = await chat_ready(pilot)
        await pilot.press(*"note: ")
        await paste(composer, "The meeting moved to Friday at noon.")
        await pilot.press(*["backspace"] * 5, *"ten")
        await enter_and_reply(pilot, screen)

        (record,) = user_records(journal_path(app))
        assert record["content"] == "note: The meeting moved to Friday at ten"
        assert pasted_parts(record) == ["The meeting moved to Friday at "]


async def test_a_recalled_prompt_keeps_its_pasted_part_and_a_dropped_path_is_pasted(
    fake: FakeProvider, tmp_path: Path
) -> None:
    fake.default = text("Noted.")
    dropped = tmp_path / "notes.txt"
    dropped.write_text("tea\n")
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen, composer = await chat_ready(pilot)
        await paste(composer, "  " + str(dropped) + "\n")  # a terminal's drop, spaces and all
        await until(lambda: composer.offer is not None, message="the offer to attach")
        await enter_and_reply(pilot, screen)  # Enter sends the path as words
        await pilot.press("up")
        await until(lambda: composer.text == str(dropped), message="the prompt recalled")
        await pilot.press("home", *"mine: ")  # not a /command now
        await enter_and_reply(pilot, screen)

        first, recalled = user_records(journal_path(app))
        assert first["content"] == str(dropped) and pasted_parts(first) == [str(dropped)]
        assert recalled["content"] == f"mine: {dropped}"
        assert pasted_parts(recalled) == [str(dropped)]


class HeldFirstReply:
    """The first chat reply is held until the fake is released; background work gets the
    defaults. A reply being written for as long as the test needs."""

    def __init__(self, fake: FakeProvider) -> None:
        self.streamed = 0
        fake.responder = self

    def __call__(self, body: dict[str, Any]) -> Step | None:
        if not body.get("stream"):
            return None
        self.streamed += 1
        return hold(text("First answer.")) if self.streamed == 1 else text("Second answer.")


async def test_a_paste_queued_during_a_reply_keeps_its_spans_when_sent(
    fake: FakeProvider,
) -> None:
    held = HeldFirstReply(fake)
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen, composer = await chat_ready(pilot)
        await pilot.press(*"first", "enter")
        await until(lambda: screen.replying and held.streamed == 1, message="the reply to start")
        await pilot.press(*"see ")
        await paste(composer, EMAIL)
        await pilot.press("enter")
        await until(lambda: app.session.queued, message="the message to be queued")

        (mark,) = queued_marks(journal_path(app))
        assert mark["content"] == f"see {EMAIL}" and mark["pasted"] == [[4, 4 + len(EMAIL)]]
        (replayed,) = load(journal_path(app)).queued  # what a crash now would find
        assert replayed.pasted == ((4, 4 + len(EMAIL)),)
        fake.release()
        await until(lambda: held.streamed == 2, message="the queued message to be sent")
        await until(lambda: not screen.replying, message="the reply to it")
        await screen.reply_finished()

        first, queued = user_records(journal_path(app))
        assert "pasted" not in first
        assert queued["queued"] == mark["id"] and queued["content"] == mark["content"]
        assert pasted_parts(queued) == [EMAIL]


def test_a_queued_record_from_before_spans_is_still_sent() -> None:
    """A journal written before spans were kept (or with a damaged one) resumes as it did."""
    store = MemoryStore().ensure()
    journal = store.new_session("gpt-4.1-mini")
    journal._write({"mark": "queued", "id": "q0001", "content": "typed", "time": "x"})
    journal._write({"mark": "queued", "id": "q0002", "content": "ab", "pasted": "junk"})
    assert [(q.content, q.pasted) for q in load(journal.path).queued] == [
        ("typed", ()),
        ("ab", ()),
    ]
    live = LiveSession.resume_or_start(store)  # what was queued is sent as it resumes
    try:
        assert [(m["content"], "pasted" in m) for m in live.messages] == [
            ("typed", False),
            ("ab", False),
        ]
    finally:
        live.release()
