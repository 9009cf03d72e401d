"""INSTRUCTIONS.md (in the prompt above the memory, edited and versioned in /memory) and
/remember (a line in MEMORY.md at once, versioned, no model call)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Markdown, TabbedContent, TextArea

from app.screens.memory import MemoryScreen
from memory import MemorySettings, MemoryStore
from memory.chat.system_prompt import system_prompt
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, send, until


def test_instructions_go_above_the_memory_in_the_prompt() -> None:
    prompt = system_prompt("- Name: Ana", limit=1000, instructions="Answer in French.")
    assert prompt.index("Answer in French.") < prompt.index("- Name: Ana")
    assert "INSTRUCTIONS.md" not in system_prompt("- Name: Ana", limit=1000)


async def test_the_chat_sends_instructions_and_memory(fake: FakeProvider) -> None:
    store = MemoryStore().ensure()
    store.write_memory("- Name: Ana\n")
    store.instructions_path.write_text("Always answer in one sentence.\n")
    fake.script("gpt-4.1-mini", text("D'accord."))

    app = make_app(fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
    system = fake.requests[-1].body["messages"][0]["content"]
    assert system.index("Always answer in one sentence.") < system.index("- Name: Ana")


def test_saving_instructions_keeps_the_previous_text_and_refuses_a_stale_base() -> None:
    store = MemoryStore().ensure()
    store.instructions_path.write_text("Be brief.\n")
    base = store.read_instructions()
    assert store.save_instructions("Be brief. Use metric units.\n", base.digest) is None
    texts = [p.read_text() for p in store.instruction_versions()]
    assert texts == ["Be brief.\n", "Be brief. Use metric units.\n"]
    on_disk = store.save_instructions("something else", base.digest)
    assert on_disk is not None and on_disk.text == "Be brief. Use metric units.\n"
    assert store.instructions_path.read_text() == "Be brief. Use metric units.\n"


async def test_instructions_are_shown_and_edited_in_the_memory_screen() -> None:
    store = MemoryStore().ensure()

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        view = app.screen.query_one("#instructions-view", Markdown)
        assert "INSTRUCTIONS.md is empty" in view.source
        app.screen.query_one(TabbedContent).active = "instructions-tab"
        await pilot.pause()
        await pilot.press("e")
        editor = app.screen.query_one("#editor", TextArea)
        assert editor.display and editor.text == ""
        await pilot.press(*"Reply in Portuguese.")
        await pilot.press("ctrl+s")
        await until(lambda: not editor.display, message="the save")
        await pilot.pause()
        assert app.screen.query_one(TabbedContent).active == "instructions-tab"
        assert "Reply in Portuguese." in view.source
    assert store.instructions_path.read_text() == "Reply in Portuguese."
    assert not store.memory_path.exists()  # the edit went to the file whose tab was open
    assert [p.read_text() for p in store.instruction_versions()] == ["Reply in Portuguese."]


async def test_remember_adds_a_line_now_as_a_version_without_a_model(fake: FakeProvider) -> None:
    store = MemoryStore().ensure()
    store.write_memory("# About Ana\n- likes tea\n")

    on_loop: list[bool] = []

    app = make_app(fake)
    real = app.store.remember

    def remember(line: str) -> int:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return real(line)

    app.store.remember = remember  # type: ignore[method-assign,assignment]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"/remember I am vegetarian.", "enter")
        await until(
            lambda: any("Remembered" in n.message for n in app._notifications),
            message="the notice that it was remembered",
        )
    assert on_loop == [False]  # the locked, fsynced write is not on the event loop
    assert store.memory_path.read_text() == "# About Ana\n- likes tea\n- I am vegetarian.\n"
    sources = [v.source for v in store.versions()]
    assert sources == ["edited by you", "remembered"]  # the earlier text is kept too
    assert fake.requests == []


def test_remember_refuses_empty_text_and_an_overfull_memory() -> None:
    store = MemoryStore(settings=MemorySettings(memory_max_chars=30)).ensure()
    with pytest.raises(ValueError, match="Nothing to remember"):
        store.remember("  \x1b[31m ")
    store.write_memory("- " + "x" * 20 + "\n")
    with pytest.raises(ValueError, match="budget"):
        store.remember("one more fact that does not fit")
    assert store.memory_path.read_text() == "- " + "x" * 20 + "\n"
    assert store.versions() == []
