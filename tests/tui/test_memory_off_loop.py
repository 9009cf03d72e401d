"""/memory calls the store through its async façade: with the store's lock forbidden on the
event-loop thread, a walk through every tab (edit and save both files, a conflict, the
versions, a restore, an undo, History, Where from) takes the lock only off the loop."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static, TextArea

from app.screens.change import ChangeDialog
from app.screens.conflict import ConflictDialog
from app.screens.memory import MemoryScreen
from app.widgets.document import Document
from memory import MemoryStore
from memory.data import files
from memory.data.files import LockedOnLoop, forbid_on_loop
from tests.support import make_app, until


@pytest.fixture
def locked_on_the_loop(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The store's lock raises on a thread running an event loop; each such lock is noted
    here too (a worker's error would otherwise pass unseen)."""
    seen: list[Path] = []
    check = files._check_off_loop

    def noted(path: Path, blocking: bool) -> None:
        try:
            check(path, blocking)
        except LockedOnLoop:
            seen.append(path)
            raise

    monkeypatch.setattr(files, "_check_off_loop", noted)
    forbid_on_loop(True)
    try:
        yield seen
    finally:
        forbid_on_loop(False)


def seeded() -> MemoryStore:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n- likes tea\n")
    store.instructions_path.write_text("Be brief.\n")
    store.append_history("[2026-11-01 09:00] Talked about green tea.")
    return store


async def test_memory_takes_the_store_lock_only_off_the_loop(
    locked_on_the_loop: list[Path],
) -> None:
    async def reached(condition: Callable[[], object], message: str) -> None:
        """`condition`, or a lock on the loop, which fails the walk at once."""
        await until(lambda: locked_on_the_loop or condition(), message=message)
        assert locked_on_the_loop == [], f"the store was locked on the loop for {message}"

    store = seeded()
    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await reached(lambda: isinstance(app.screen, MemoryScreen), "/memory")
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        editor = screen.query_one("#editor", TextArea)

        # MEMORY.md: edit and save.
        await pilot.press("e")
        await reached(lambda: editor.display, "the editor")
        editor.load_text("# Me\n- likes tea\n- and cake\n")
        await pilot.press("ctrl+s")
        await reached(lambda: not editor.display, "the save of MEMORY.md")
        assert store.memory_path.read_text() == "# Me\n- likes tea\n- and cake\n"

        # A change on disk under the edit; the one on disk is taken, the edit kept aside.
        await pilot.press("e")
        await reached(lambda: editor.display, "the editor")
        editor.load_text("# Me\n- mine\n")
        store.memory_path.write_text("# Me\n- theirs\n")
        await pilot.press("ctrl+s")
        await reached(lambda: isinstance(app.screen, ConflictDialog), "the conflict")
        await pilot.click("#theirs-button")
        await reached(lambda: not editor.display, "the edit kept aside")
        assert store.version_text(store.version_numbers()[-1]) == b"# Me\n- mine\n"

        # INSTRUCTIONS.md: edit and save.
        await pilot.press("2", "e")
        await reached(lambda: editor.display, "the editor")
        editor.load_text("Be kind.\n")
        await pilot.press("ctrl+s")
        await reached(lambda: not editor.display, "the save of INSTRUCTIONS.md")
        assert store.instructions_path.read_text() == "Be kind.\n"

        # Versions: the oldest beside MEMORY.md, then restored.
        await pilot.press("4")
        versions = screen.query_one("#versions", OptionList)
        await reached(lambda: versions.option_count == 3, "the versions")
        versions.highlighted = 2  # the oldest: MEMORY.md before the cake
        await reached(lambda: "+- theirs" in screen.diff_text, "the diff")
        await pilot.click("#restore")
        await reached(lambda: any("Restored version 1" in n for n in app.notices), "restore")
        assert store.memory_path.read_text() == "# Me\n- likes tea\n"

        # Ctrl+R on the restore, and undo it.
        app.review.last_version = store.version_numbers()[-1]
        await pilot.press("ctrl+r")
        await reached(lambda: isinstance(app.screen, ChangeDialog), "the change")
        await pilot.click("#undo")
        await reached(lambda: any("Change undone" in n for n in app.notices), "undo")
        assert store.memory_path.read_text() == "# Me\n- theirs\n"

        # History, and where each line came from.
        await pilot.press("3")
        history = screen.query_one("#history-view", Document)
        await reached(lambda: "green tea" in history.source, "the history")
        await pilot.press("b")
        detail = screen.query_one("#blame-detail", Static)
        await reached(lambda: "Line 1" in str(detail.render()), "where from")
    assert locked_on_the_loop == []
