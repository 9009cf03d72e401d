"""Memory you can trust, in the app: the notice after a consolidation with its diff and undo,
proposals reviewed with Ctrl+R, /tidy, and /memory's "where from" view."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from textual.widgets import OptionList, TextArea

from app.screens.change import ChangeDialog
from app.screens.memory import MemoryScreen
from app.screens.transcript import TranscriptScreen
from app.widgets.message import MessageView
from memory import MemorySettings, MemoryStore
from memory.settings import Review
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import make_app, rewrite_args, save_args, send, settle, until

if TYPE_CHECKING:
    from app.main import KeptApp

MEMORY = "# About the user\n- Name: Ana\n"


def notices(app: KeptApp) -> list[str]:
    return app.notices


async def test_a_saved_change_is_announced_shown_and_undone(fake: FakeProvider) -> None:
    fake.default = text("Nice to meet you.")
    fake.set_default("llama-3.3-70b-versatile", tool_call("save_memory", save_args()))

    async def scenario() -> MemoryStore:
        app = make_app(fake)
        async with app.run_test(size=(130, 40)) as pilot:
            await pilot.press("ctrl+r")
            await until(
                lambda: "No memory change to review yet." in notices(app),
                message="the answer to Ctrl+R",
            )
            await send(pilot, "I'm Ana")
            await pilot.press(*"/new", "enter")
            await settle(pilot)
            assert (
                "Memory updated: +2 −0 lines. Ctrl+R shows the change and can undo it."
                in notices(app)
            )
            await pilot.press("ctrl+r")
            await until(lambda: isinstance(app.screen, ChangeDialog), message="the diff")
            dialog = app.screen
            assert isinstance(dialog, ChangeDialog)
            assert "+- Name: Ana" in dialog.diff
            assert dialog.title_text.startswith("Memory updated: +2 −0 lines (version 1, session ")
            await pilot.click("#undo")
            await until(lambda: any("Change undone" in n for n in notices(app)), message="undo")
            assert not isinstance(app.screen, ChangeDialog)
            return app.store

    store = await scenario()
    assert store.memory_path.read_text() == ""
    assert len(store.history_entries()) == 1  # the session's history entry stays
    assert [v.source for v in store.versions()] == ["consolidation", "undo of version 1"]


async def test_review_before_holds_the_change_until_accepted_with_an_edit(
    fake: FakeProvider,
) -> None:
    fake.default = text("Nice to meet you.")
    fake.set_default("llama-3.3-70b-versatile", tool_call("save_memory", save_args()))
    settings = MemorySettings(attempt_deadline=5.0, review=Review.BEFORE)

    async def scenario() -> MemoryStore:
        app = make_app(fake, memory_settings=settings)
        async with app.run_test(size=(130, 40)) as pilot:
            await send(pilot, "I'm Ana")
            await pilot.press(*"/new", "enter")
            await settle(pilot)
            assert not app.store.memory_path.exists()
            assert str(app.memory_status) == "1 memory change to review (Ctrl+R)"
            assert any("waiting for your review" in n for n in notices(app))
            await pilot.press("ctrl+r")
            await until(lambda: isinstance(app.screen, ChangeDialog), message="the proposal")
            await pilot.click("#edit")
            editor = app.screen.query_one("#change-editor", TextArea)
            assert editor.text == MEMORY
            editor.load_text("# About the user\n- Name: Ana (she/her)\n")
            await pilot.click("#accept")
            await until(lambda: str(app.memory_status) == "Memory saved", message="the save")
            assert "Memory change accepted and saved." in notices(app)
            return app.store

    store = await scenario()
    assert store.memory_path.read_text() == "# About the user\n- Name: Ana (she/her)\n"
    assert store.versions()[-1].source == "consolidation, edited by you"
    assert len(store.history_entries()) == 1


async def test_a_local_models_change_is_accepted_with_one_key(fake: FakeProvider) -> None:
    """The newcomer with a local model: the change waits (review = "auto"), the status bar
    says so, Ctrl+R shows it and `a` accepts it."""
    from tests.support import local_catalog

    fake.set_default("smollm2", text(json.dumps(save_args())))
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0))

    from app.main import KeptApp
    from app.settings import AppSettings, Settings

    settings = Settings(AppSettings(model="smollm2"), store.settings, ())
    app = KeptApp(store=store, catalog=local_catalog(fake), settings=settings)
    async with app.run_test(size=(100, 30)) as pilot:
        fake.set_default("smollm2", text("Hello Ana."))
        await send(pilot, "Hi, I'm Ana")
        fake.set_default("smollm2", text(json.dumps(save_args())))
        await pilot.press(*"/new", "enter")
        await settle(pilot)
        assert str(app.memory_status) == "1 memory change to review (Ctrl+R)"
        assert any("from smollm2 is waiting for your review" in n for n in notices(app))
        await pilot.press("ctrl+r")
        await until(lambda: isinstance(app.screen, ChangeDialog), message="the proposal")
        await pilot.press("a")
        await until(lambda: str(app.memory_status) == "Memory saved", message="the save")
    assert store.memory_path.read_text() == MEMORY


async def test_tidy_command_offers_the_diff_and_writes_when_accepted(fake: FakeProvider) -> None:
    tidy = "# About Ana\n- Drinks green tea every day\n"
    # A tidy is the one whole-file rewrite left (parse_rewrite), shown as a diff.
    fake.default = tool_call("save_memory", rewrite_args(entry="Merged.", memory=tidy))

    async def scenario() -> MemoryStore:
        app = make_app(fake)
        app.store.ensure().write_memory(
            "# About Ana\n- Drinks green tea\n- drinks green tea every day\n"
        )
        async with app.run_test(size=(130, 40)) as pilot:
            await pilot.press(*"/tidy", "enter")
            await until(lambda: isinstance(app.screen, ChangeDialog), message="the tidy")
            dialog = app.screen
            assert isinstance(dialog, ChangeDialog)
            assert dialog.title_text.startswith("Tidy MEMORY.md: +1 −2 lines")
            await pilot.click("#accept")
            await until(lambda: "tidied" in " ".join(notices(app)), message="the tidy saved")
            return app.store

    store = await scenario()
    assert store.memory_path.read_text() == tidy
    assert store.versions()[-1].source == "tidy"


async def test_memory_screen_says_where_a_line_came_from(fake: FakeProvider) -> None:
    fake.default = text("Nice to meet you.")
    fake.set_default(
        "llama-3.3-70b-versatile",
        tool_call(
            "save_memory", save_args(memory="# About the user\n- Name: Ana\n- Lives in Zürich\n")
        ),
    )

    app = make_app(fake)
    async with app.run_test(size=(130, 40)) as pilot:
        await send(pilot, "Hi, I'm Ana and I live in Zürich.")
        await send(pilot, "What is the weather like?")
        session = app.session.id
        await pilot.press(*"/new", "enter")
        await settle(pilot)
        app.store.memory_path.write_text(app.store.memory_path.read_text() + "- Owns a sailboat\n")
        await pilot.press(*"/memory", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        await pilot.press("b")
        await pilot.pause()
        lines = screen.query_one("#blame", OptionList)
        assert lines.option_count == 4
        lines.highlighted = 2  # "- Lives in Zürich"
        await pilot.pause()
        detail = str(screen.query_one("#blame-detail").render())
        assert f"session {session}" in detail and "llama-3.3-70b-versatile" in detail
        assert "The user introduced themselves." in detail  # its history entry
        assert "Hi, I'm Ana and I live in Zürich." in detail  # the message it came from
        assert "What is the weather" not in detail
        lines.highlighted = 3  # "- Owns a sailboat"
        await pilot.pause()
        detail = str(screen.query_one("#blame-detail").render())
        assert "edited by you" in detail
        lines.highlighted = 2
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, TranscriptScreen), message="transcript")
        transcript = app.screen
        assert isinstance(transcript, TranscriptScreen)
        assert transcript.marked == [0]
        marked = list(transcript.query(".marked").results(MessageView))
        assert len(marked) == 1 and marked[0].text == "Hi, I'm Ana and I live in Zürich."
        assert "The user introduced themselves." in transcript.title_text
