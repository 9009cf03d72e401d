"""/memory edits MEMORY.md and INSTRUCTIONS.md through one document protocol: a change on
disk under an edit, and the conflict it leads to, name the file being edited."""

from __future__ import annotations

import pytest
from textual.widgets import Label, Static, TabbedContent, TextArea

from app.documents import EditableDocument, InstructionsDocument, MemoryDocument
from app.screens.conflict import ConflictDialog
from app.screens.memory import MemoryScreen
from memory import MemoryStore
from memory.data.aio import AsyncStore
from tests.support import make_app, until


@pytest.mark.asyncio
async def test_each_file_is_a_document() -> None:
    store = MemoryStore().ensure()
    aio = AsyncStore(store)
    documents: list[EditableDocument] = [MemoryDocument(aio), InstructionsDocument(aio)]
    assert [(d.name, d.tab, d.path) for d in documents] == [
        ("MEMORY.md", "memory-tab", store.memory_path),
        ("INSTRUCTIONS.md", "instructions-tab", store.instructions_path),
    ]
    store.instructions_path.write_text("Be brief.\n")
    instructions = documents[1]
    base = await instructions.read()
    store.instructions_path.write_text("Be very brief.\n")
    on_disk = await instructions.save("Be kind.\n", base)  # a stale base: nothing written
    assert on_disk is not None and on_disk.text == "Be very brief.\n"
    await instructions.keep("Be kind.\n")
    assert [p.read_text() for p in store.instruction_versions()][-1] == "Be kind.\n"


@pytest.mark.asyncio
async def test_instructions_changed_under_an_edit_are_named_as_such() -> None:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n- likes tea\n")
    store.instructions_path.write_text("Be brief.\n")
    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await until(lambda: isinstance(app.screen, MemoryScreen), message="/memory")
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        screen.query_one(TabbedContent).active = "instructions-tab"
        await pilot.pause()
        await pilot.press("e")
        editor = screen.query_one("#editor", TextArea)
        await until(lambda: editor.display and editor.text == "Be brief.\n", message="the editor")
        status = screen.query_one("#memory-status", Static)

        def changed_on_disk() -> bool:
            """Written again until the watcher, which starts in its own time, sees it."""
            if "changed on disk" in str(status.content):
                return True
            store.instructions_path.write_text("Be very brief.\n")
            return False

        await until(changed_on_disk, message="the change under the edit")
        assert str(status.content).startswith("INSTRUCTIONS.md changed on disk while you edit")
        await pilot.press("ctrl+s")
        await until(lambda: isinstance(app.screen, ConflictDialog), message="the conflict")
        title = app.screen.query_one(".dialog-title", Label)
        assert str(title.content) == "INSTRUCTIONS.md changed on disk while you were editing it"
        await pilot.click("#theirs-button")
        await until(lambda: not editor.display, message="the edit set aside")
    assert store.memory_path.read_text() == "# Me\n- likes tea\n"
    assert [p.read_text() for p in store.instruction_versions()][-1] == "Be brief.\n"
