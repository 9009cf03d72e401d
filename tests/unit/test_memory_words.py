"""A refused write of MEMORY.md worded by the surface the user is on: the shell names its
own verbs, the TUI its slash commands (memory.data returns the kind and the facts)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from app.cli.main import main
from app.words.memory import refused
from memory import MemoryStore
from memory.data.memory_file import MemoryRefused


def test_an_undo_refused_in_the_shell_names_the_shells_verb(
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = MemoryStore().ensure()
    number = store.remember("I like tea")
    store.write_memory("- changed by hand\n")
    assert main(["memory", "undo", str(number)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"kept memory undo: MEMORY.md changed after version {number}, so it cannot be undone "
        "here; `kept memory versions` lists every version to restore.\n"
    )
    assert store.read_memory().text == "- changed by hand\n"  # nothing written


def test_the_tui_says_what_it_said_before() -> None:
    store = MemoryStore().ensure()
    store.settings = replace(store.settings, memory_max_chars=20)
    number = store.remember("tea")
    store.write_memory("- changed by hand\n")
    attempts: list[Callable[[], int]] = [
        lambda: store.remember(" "),
        lambda: store.remember("a line far longer than twenty characters"),
        lambda: store.undo(number),
    ]
    refusals = []
    for attempt in attempts:
        with pytest.raises(MemoryRefused) as caught:
            attempt()
        refusals.append(caught.value)
    # The memory layer says the fact; only the app names a command.
    assert not any("/" in str(r) or "`" in str(r) for r in refusals)
    assert all(refused(r).startswith(str(r).split(":")[0].rstrip(".")) for r in refusals)
    assert "/tidy it first" in refused(refusals[1])
    assert "`kept memory tidy` it first" in refused(refusals[1], shell=True)
    assert "/memory lists every version" in refused(refusals[2])
