"""Waiting until a screen stops changing by itself, before its picture is taken.

A snapshot taken too early on a busy machine shows a moment, not the screen: an input's
cursor blinks every half second (the onboarding picture lost its cursor under two CPU
hogs), focus lands a frame after the screen opens, start-up jobs and workers draw when they
finish, and a scroll may still be animating.
"""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tests.support import until

# Workers that last as long as their screen (/memory watches its files): never finished.
LIFELONG = frozenset({"watch"})


async def settled(pilot: Pilot[Any]) -> None:
    """Wait for the start-up jobs, every worker, the focus (on a screen that can take it) and
    every animation; then stop the cursors blinking, shown where they are."""
    app = pilot.app

    def busy() -> list[str]:
        return [w.name for w in app.workers if w.group not in LIFELONG and not w.is_finished]

    await until(pilot, lambda: getattr(app, "ready_at", 0) is not None, "the start-up jobs")
    await until(pilot, lambda: not busy(), f"the workers to finish (running: {busy()})")
    await pilot.pause()
    if app.screen.focus_chain:
        await until(pilot, lambda: app.focused is not None, "a focused widget")
    for widget in app.screen.query("Input, TextArea"):
        assert isinstance(widget, Input | TextArea)
        widget.cursor_blink = False  # the cursor stays drawn on the focused widget
    await pilot.wait_for_scheduled_animations()
    await until(pilot, lambda: not busy(), f"the workers to finish (running: {busy()})")
    await pilot.pause()
