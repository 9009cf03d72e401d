"""What every snapshot needs: the models and the clock it shows, and a screen that has
stopped changing by itself before its picture is taken.

A snapshot taken too early on a busy machine shows a moment, not the screen: an input's
cursor blinks every half second (the onboarding picture lost its cursor under two CPU
hogs), focus lands a frame after the screen opens, start-up jobs and workers draw when they
finish, and a scroll may still be animating.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from app.widgets.composer import Composer
from catalog import MODEL_CATALOG
from tests.support import until

SIZE = (100, 32)
CLOCK = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)

# The models the pictures show: a fixed list, so adding a model to the catalog (one line)
# changes no picture. Their labels, tiers and descriptions still come from the catalog.
SHOWN = (
    "claude-opus-4-5",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "gpt-5",
    "gpt-5-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "o3",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "kimi-k2-instruct",
    "llama-3.1-8b-instant",
    "deepseek-chat",
    "llama-3.3-70b-versatile",
    "qwen3-32b",
    "llama-4-scout-17b-16e-instruct",
)
SHOWN_MODELS = tuple(e for e in MODEL_CATALOG if e.id in SHOWN)

# pytest-textual-snapshot's snap_compare fixture: (app, *, run_before, terminal_size, ...).
SnapCompare = Callable[..., bool]

# Workers that last as long as their screen (/memory watches its files): never finished.
LIFELONG = frozenset({"watch"})


async def settled(pilot: Pilot[Any]) -> None:
    """Wait for the start-up jobs, every worker, the focus (on a screen that can take it) and
    every animation; then stop the cursors blinking, shown where they are."""
    app = pilot.app

    def busy() -> list[str]:
        return [w.name for w in app.workers if w.group not in LIFELONG and not w.is_finished]

    await until(lambda: getattr(app, "ready_at", 0) is not None, message="the start-up jobs")
    await until(lambda: not busy(), message=f"the workers to finish (running: {busy()})")
    await pilot.pause()
    if app.screen.focus_chain:
        await until(lambda: app.focused is not None, message="a focused widget")
    for widget in app.screen.query("Input, TextArea"):
        assert isinstance(widget, Input | TextArea)
        widget.cursor_blink = False  # the cursor stays drawn on the focused widget
    await pilot.wait_for_scheduled_animations()
    await until(lambda: not busy(), message=f"the workers to finish (running: {busy()})")
    await pilot.pause()


async def composer_ready(pilot: Pilot[Any]) -> None:
    """Wait until the composer has focus: keys pressed before it do not reach it (a snapshot
    once showed "rite a greeting function")."""
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")


def pressing(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A run_before that presses `keys` once the composer has focus."""

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await pilot.press(*keys)
        await settled(pilot)

    return before
