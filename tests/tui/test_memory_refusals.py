"""What the store refuses, worded by the app for the surface the user is on
(app.words.memory): the TUI names its own places, the shell its commands."""

from __future__ import annotations

import pytest

from app.words.memory import not_written
from memory import MemoryStore


def test_no_such_version_is_worded_for_the_tui_and_for_the_shell() -> None:
    store = MemoryStore().ensure()
    with pytest.raises(LookupError) as caught:
        store.restore(7)
    assert not_written(caught.value) == "There is no version 7; /memory's Versions tab lists them."
    assert not_written(caught.value, shell=True) == (
        "There is no version 7; `kept memory versions` lists them."
    )


def test_a_refused_write_is_worded_for_the_surface_and_an_os_error_as_the_os_says() -> None:
    store = MemoryStore().ensure()
    first = store.remember("I like tea")
    store.remember("I cycle")  # MEMORY.md changed after the first
    with pytest.raises(ValueError) as caught:
        store.undo(first)
    said = not_written(caught.value)
    assert said.startswith(f"MEMORY.md changed after version {first}") and "/memory lists" in said
    assert not_written(OSError("disk full")) == "disk full"
