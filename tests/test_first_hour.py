"""The rough edges of a first hour with Kept, each pinned: Pilot, CLI and file tests."""

from __future__ import annotations

import asyncio

from textual import events

from app.widgets.composer import Composer
from tests.fakes.provider import FakeProvider
from tests.support import make_app


def run(scenario):
    return asyncio.run(scenario())


async def composer_ready(pilot) -> Composer:
    while not isinstance(pilot.app.focused, Composer):  # keys before focus are lost
        await pilot.pause()
    return pilot.app.focused


def read_at_once(app, *keys: str) -> None:
    """Keys as one read from the terminal delivers them: queued together, no pause."""
    for key in keys:
        event = events.Key(key, None)
        event.set_sender(app)
        app._driver.send_message(event)


# --- 1. keys --------------------------------------------------------------------------------

def test_the_parser_reads_esc_cr_as_alt_enter() -> None:
    from textual._xterm_parser import XTermParser

    import app.widgets.composer  # noqa: F401  (teaches the parser)

    keys = [e.key for e in XTermParser().feed("\x1b\r") if isinstance(e, events.Key)]
    assert keys == ["alt+enter"]


def test_tab_then_enter_in_one_read_completes_before_sending(fake: FakeProvider) -> None:
    from app.screens.help import HelpScreen

    async def scenario():
        app = make_app(fake)
        async with app.run_test() as pilot:
            await composer_ready(pilot)
            await pilot.press(*"/he")
            read_at_once(app, "tab", "enter")
            for _ in range(100):  # a bounded wait: the wrong outcome must fail, not hang
                if isinstance(app.screen, HelpScreen):
                    break
                await pilot.pause()
            assert isinstance(app.screen, HelpScreen), "Enter sent /he before Tab completed"

    run(scenario)


# --- 2. a broken stream ---------------------------------------------------------------------

def test_a_broken_stream_keeps_the_partial_reply_on_screen_and_in_the_journal(
        fake: FakeProvider) -> None:
    from app.widgets.message import MessageView
    from tests.fakes.provider import cut
    from tests.support import send

    fake.script("gpt-4.1-mini", cut(after_chunks=6))

    async def scenario():
        app = make_app(fake)
        async with app.run_test() as pilot:
            await composer_ready(pilot)
            await send(pilot, "tell me a long story")
            reply, notice = list(app.screen.query(MessageView))[-2:]
            assert "partial0 partial1" in reply.text and "partial5" in reply.text
            assert reply.who.endswith("cut off")
            assert notice.has_class("error") and "broke off" in notice.text
            assert len(fake.requests) == 1  # no other model replaced what was read
            last = app.session.messages[-1]
            assert last["role"] == "assistant" and "partial5" in last["content"]
            assert last["content"].endswith("*[reply cut off]*")

    run(scenario)
