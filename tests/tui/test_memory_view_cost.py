"""/memory with MEMORY.md at its budget: the document is drawn as one piece, not a widget
per block and per bullet (which took most of a second to lay out at each change)."""

from __future__ import annotations

from textual.widgets import Markdown

from app.screens.memory import MemoryScreen
from memory import MemoryStore
from tests.support import make_app, until

BULLETS = 300  # some 16,000 characters: MEMORY.md at its budget


def full_memory() -> str:
    lines = [f"- fact number {n} about the user and what they like" for n in range(BULLETS)]
    return "# About me\n\n" + "\n".join(lines) + "\n"


async def test_a_full_memory_is_drawn_as_one_piece_not_a_widget_per_line() -> None:
    store = MemoryStore().ensure()
    store.write_memory(full_memory())

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await until(lambda: isinstance(app.screen, MemoryScreen), message="/memory")
        view = app.screen.query_one("#memory-view", Markdown)
        last = f"fact number {BULLETS - 1} "
        # Every line is there and laid out (a line a bullet, the heading above them).
        await until(
            lambda: last in view.source and view.size.height > BULLETS, message="MEMORY.md drawn"
        )
        parts = list(view.walk_children())
        assert len(parts) <= 2, f"{len(parts)} widgets for one document"


async def test_escape_sequences_in_memory_never_reach_the_screen() -> None:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n- likes \x1b]0;pwned\x07\x1b[2Jtea\n")

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await until(lambda: isinstance(app.screen, MemoryScreen), message="/memory")
        view = app.screen.query_one("#memory-view", Markdown)
        await until(lambda: view.size.height > 1, message="MEMORY.md drawn")
        drawn = app.export_screenshot()
        assert "tea" in drawn
        assert "\x1b" not in drawn and "\x07" not in drawn
