"""A day of chat: nothing typed is dropped while a reply is written, and a reply that is
empty or cut off says so instead of passing for a normal one."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from textual.pilot import Pilot

from app.screens.chat import QUEUED, ChatScreen
from app.widgets.message import MessageView
from memory import MemoryStore
from memory.sessions.journal import load
from tests.fakes.provider import FakeProvider, RecordedRequest, Step, text
from tests.support import make_app, send, until


def chats(fake: FakeProvider) -> list[RecordedRequest]:
    """The chat requests the fake received (streamed; background work is not)."""
    return [r for r in fake.requests if r.stream]


def said(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in messages if m["role"] in ("user", "assistant")]


async def type_and_enter(pilot: Pilot[Any], words: str) -> None:
    await pilot.press(*words)
    await pilot.press("enter")


class Held:
    """The fake's answers in turn, the first held back until `go` is set: a reply being
    written for as long as the test needs, then answered in full."""

    def __init__(self, fake: FakeProvider, *answers: str) -> None:
        self.go = threading.Event()
        self.answers = list(answers)
        self.asked = 0
        fake.responder = self

    def __call__(self, body: dict[str, Any]) -> Step | None:
        if not body.get("stream"):
            return None  # background work: the defaults
        self.asked += 1
        if self.asked == 1:
            self.go.wait(300)
        return text(self.answers[min(self.asked, len(self.answers)) - 1])


@pytest.fixture
def held(fake: FakeProvider) -> Iterator[Held]:
    hold = Held(fake, "slow slow slow", "Second answer.")
    yield hold
    hold.go.set()


async def reply_streaming(pilot: Pilot[Any], fake: FakeProvider) -> ChatScreen:
    """Send a first message whose reply is held until the test lets it go."""
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await until(lambda: pilot.app.focused is not None, message="the composer's focus")
    await type_and_enter(pilot, "first")
    await until(lambda: screen.replying and len(chats(fake)) == 1, message="the reply to start")
    return screen


async def test_a_message_sent_while_a_reply_streams_is_journaled_queued_and_sent_after(
    fake: FakeProvider, held: Held
) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await reply_streaming(pilot, fake)
        await type_and_enter(pilot, "second")
        # On disk the moment Enter was pressed, before the first reply has ended.
        on_disk = load(app.session.journal.path)
        assert [q.content for q in on_disk.queued] == ["second"]
        views = list(screen.query(MessageView))
        assert views[-1].who == QUEUED and views[-1].text == "second"
        assert len(chats(fake)) == 1  # not sent to the model yet
        held.go.set()
        await until(lambda: len(chats(fake)) == 2, message="the queued message to be sent")
        await screen.reply_finished()
        await until(lambda: not screen.replying, message="the second reply")
        await screen.reply_finished()
        second = chats(fake)[1].body["messages"]
        print(
            "REQS",
            [(r.gateway, r.model, r.stream, len(r.body["messages"])) for r in fake.requests],
        )
        assert said(second[1:]) == [
            ("user", "first"),
            ("assistant", "slow slow slow"),
            ("user", "second"),
        ]
        assert said(app.session.messages) == [
            ("user", "first"),
            ("assistant", "slow slow slow"),
            ("user", "second"),
            ("assistant", "Second answer."),
        ]
        assert views[-1].who == "You"
        assert load(app.session.journal.path).queued == []


async def test_esc_stops_the_reply_and_sends_the_queued_messages_at_once(
    fake: FakeProvider, held: Held
) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await reply_streaming(pilot, fake)
        await type_and_enter(pilot, "second")
        await type_and_enter(pilot, "third")
        await pilot.press("escape")
        await until(lambda: len(chats(fake)) == 2, message="the queued messages to be sent")
        await until(lambda: not screen.replying, message="the reply to them")
        await screen.reply_finished()
        users = [c for r, c in said(app.session.messages) if r == "user"]
        assert users == ["first", "second", "third"]  # one turn for both, in order
        assert said(app.session.messages)[-1] == ("assistant", "Second answer.")


async def test_a_message_queued_when_kept_closes_is_in_the_session_when_it_resumes(
    fake: FakeProvider, held: Held
) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        await reply_streaming(pilot, fake)
        await type_and_enter(pilot, "said before quitting")
        journal = app.session.journal.path
    assert [q.content for q in load(journal).queued] == ["said before quitting"]
    store = MemoryStore()
    from memory import LiveSession

    resumed = LiveSession.resume_or_start(store)
    assert resumed.journal.path == journal
    assert ("user", "said before quitting") in said(resumed.messages)
    assert resumed.queued == []
    resumed.release()


async def test_new_while_a_message_is_queued_keeps_it_in_the_closed_session_unsent(
    fake: FakeProvider, held: Held
) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        await reply_streaming(pilot, fake)
        old = app.session
        await type_and_enter(pilot, "one more thing")
        await type_and_enter(pilot, "/new")
        await until(lambda: app.session is not old, message="the new session")
        assert ("user", "one more thing") in said(old.journal.messages)
        assert old.journal.queued == []
        for _ in range(5):
            await pilot.pause()
        # Only the first message was ever sent (and the consolidation of the old one).
        assert len(chats(fake)) == 1


async def test_an_empty_reply_is_not_saved_as_an_answer_and_the_notice_says_why(
    fake: FakeProvider,
) -> None:
    fake.default = text("")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        assert said(app.session.messages) == [("user", "hello")]
        notice = list(app.screen.query(MessageView))[-1]
        assert notice.has_class("error")
        assert "sent an empty reply" in notice.text
        assert "your message is saved" in notice.text


async def test_a_reply_stopped_for_length_is_marked_cut_off(fake: FakeProvider) -> None:
    fake.script("gpt-4.1-mini", text("The story begins and", finish="length"))

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "tell me a story")
        reply, notice = list(app.screen.query(MessageView))[-2:]
        assert reply.who.endswith("cut off")
        assert notice.has_class("error") and "ran out of room" in notice.text
        last = app.session.messages[-1]
        assert last["content"] == "The story begins and\n\n*[reply cut off]*"


def test_the_failure_notice_names_a_file_model_by_its_label_and_keeps_the_reason() -> None:
    from app.words.chat import failure_notice
    from catalog import Attempt, Catalog, KeyStore, Kind, Outcome
    from catalog.config import CatalogConfig, local_model

    path = "/home/ana/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    catalog = Catalog((local_model(path),), CatalogConfig(), KeyStore(environ={}))
    reason = (
        "answered HTTP 500 after the reply began: Requested tokens (4115) exceed context "
        "window of 4096"
    )
    attempt = Attempt(path, "local", Outcome.FAILED, Kind.SERVER_ERROR, reason=reason)
    notice = failure_notice(catalog, path, [attempt])
    assert "SmolLM2-135M-Instruct.Q4_1 answered HTTP 500" in notice
    assert "exceed context window of 4096" in notice  # the reason, not cut away
    assert "/home/ana" not in notice


def test_the_sessions_row_names_a_file_model_by_its_file() -> None:
    from app.screens.sessions import _row
    from memory.sessions.browse import SessionSummary

    path = "/home/ana/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    summary = SessionSummary("20261201-090000-abc123", "2026-12-01 09:00", "Hi", path, 2, "saved")
    row = _row(summary).plain
    assert "SmolLM2-135M-In…" in row and "/home" not in row
