"""Messages up: each screen asks the app for a new session, to continue one, or to count
memory again by posting a message; the app decides, and owns the reply being written, so
that Ctrl+N works from any screen."""

from __future__ import annotations

from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Button, OptionList

from app.messages import ContinueRequested, MemoryChanged, NewSessionRequested
from app.screens.chat import ChatScreen
from app.screens.sessions import DeleteDialog, SessionsScreen
from app.widgets.composer import Composer
from app.widgets.message import MessageView
from memory import MemoryStore
from memory.sessions import journal as journals
from tests.fakes.provider import FakeProvider, hang, text
from tests.support import make_app, pending_session, settle, until


def once(posted: list[Message]) -> list[Message]:
    """Each message once, in order: the hook sees it at each node it bubbles through."""
    seen: set[int] = set()
    first: list[Message] = []
    for message in posted:
        if id(message) not in seen:
            seen.add(id(message))
            first.append(message)
    return first


async def chat_ready(pilot: Pilot[None]) -> ChatScreen:
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    assert isinstance(pilot.app.screen, ChatScreen)
    return pilot.app.screen


async def sessions_open(pilot: Pilot[None]) -> SessionsScreen:
    await pilot.press("f2")
    await until(lambda: isinstance(pilot.app.screen, SessionsScreen), message="/sessions")
    screen = pilot.app.screen
    assert isinstance(screen, SessionsScreen)
    await until(lambda: bool(screen.shown), message="the rows")
    return screen


async def test_ctrl_n_on_another_screen_stops_the_reply_and_starts_a_new_session(
    fake: FakeProvider,
) -> None:
    """Ctrl+N used to do nothing unless the chat was on top: the reply it must stop was
    the chat screen's. The reply is the app's now."""
    fake.set_default("gpt-4.1-mini", hang())
    app = make_app(fake)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = await chat_ready(pilot)
        await pilot.press(*"hello", "enter")
        await until(lambda: fake.count(model="gpt-4.1-mini") > 0, message="the request")
        old = app.session
        assert chat.replying
        await sessions_open(pilot)
        await pilot.press("ctrl+n")
        await until(lambda: app.session is not old, message="a new session")
        assert not chat.replying
        assert isinstance(app.screen, SessionsScreen)  # the user stays where they were
        await pilot.press("escape")
        await until(lambda: app.screen is chat, message="the chat")
        shown = [v.text for v in chat.query(MessageView)]
        assert shown == ["New session started."]
        said = [m["content"] for m in journals.load(old.journal.path).messages]
        assert said[0] == "hello"  # the closed session keeps what was said
        fake.release()


async def test_new_and_private_are_requests_the_app_handles(fake: FakeProvider) -> None:
    fake.default = text("Hello.")
    posted: list[Message] = []
    app = make_app(fake)
    async with app.run_test(size=(100, 30), message_hook=posted.append) as pilot:
        chat = await chat_ready(pilot)
        first = app.session
        await pilot.press(*"/new", "enter")
        await until(lambda: app.session is not first, message="the new session")
        second = app.session
        await pilot.press(*"/private", "enter")
        await until(lambda: app.session is not second, message="the private session")
        assert app.session.private and chat.private
    asked = [m.private for m in once(posted) if isinstance(m, NewSessionRequested)]
    assert asked == [False, True]


async def test_continue_is_a_request_and_the_app_closes_the_screen_that_asked(
    fake: FakeProvider,
) -> None:
    store = MemoryStore().ensure()
    other = pending_session(store)
    fake.set_default("gpt-4.1-mini", hang())  # the pending session's save waits
    posted: list[Message] = []
    app = make_app(fake)
    async with app.run_test(size=(130, 30), message_hook=posted.append) as pilot:
        await chat_ready(pilot)
        screen = await sessions_open(pilot)
        options = screen.query_one("#sessions", OptionList)
        options.focus()
        options.highlighted = next(i for i, s in enumerate(screen.shown) if s.id == other.id)
        await pilot.press("c")
        await until(lambda: isinstance(app.screen, ChatScreen), message="back to the chat")
        assert app.session.id == other.id
        fake.release()
    (request,) = [m for m in once(posted) if isinstance(m, ContinueRequested)]
    assert request.session_id == other.id and request.control is screen


async def test_deleting_a_pending_session_counts_memory_again(fake: FakeProvider) -> None:
    """The status bar said "1 pending" for a session deleted from /sessions until the
    next look a minute later."""
    store = MemoryStore().ensure()
    doomed = pending_session(store)
    fake.set_default("gpt-4.1-mini", text("Not a save_memory call."))  # it stays pending
    posted: list[Message] = []
    app = make_app(fake)
    async with app.run_test(size=(130, 30), message_hook=posted.append) as pilot:
        await chat_ready(pilot)
        await settle(pilot)
        await until(lambda: app.memory_status.pending == 1, message="one pending")
        screen = await sessions_open(pilot)
        options = screen.query_one("#sessions", OptionList)
        options.focus()
        options.highlighted = next(i for i, s in enumerate(screen.shown) if s.id == doomed.id)
        await pilot.press("d")
        await until(lambda: isinstance(app.screen, DeleteDialog), message="the dialog")
        app.screen.query_one("#delete-button", Button).press()
        await until(lambda: app.memory_status.pending == 0, message="nothing pending")
    assert any(isinstance(m, MemoryChanged) for m in posted)
