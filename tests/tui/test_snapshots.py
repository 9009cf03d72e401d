"""Screenshots of every screen in a dark and a light theme (pytest-textual-snapshot).

Update after an intended change with: .venv/bin/python -m pytest tests/tui/test_snapshots.py
--snapshot-update, then look at the SVGs before committing them.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from app.main import KeptApp
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, send, until
from tests.tui.pictures import (
    CLOCK,
    SHOWN_MODELS,
    SIZE,
    SnapCompare,
    composer_ready,
    pressing,
    settled,
)

THEMES = ["kept-dark", "kept-light"]
REPLY = (
    "Here is a small **Python** function:\n\n"
    '```python\ndef greet(name: str) -> str:\n    return f"Hello, {name}!"\n```\n\n'
    "- It takes a *name*\n- It returns a greeting\n"
)


def app_for(fake: FakeProvider | None, theme: str) -> KeptApp:
    return make_app(fake, theme=theme, clock=lambda: CLOCK, entries=SHOWN_MODELS)


@pytest.mark.parametrize("theme", THEMES)
def test_chat_with_a_streamed_reply(
    snap_compare: SnapCompare, fake: FakeProvider, theme: str
) -> None:
    fake.default = text(REPLY, chunks=16)

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await send(pilot, "Write a greeting function")
        await settled(pilot)

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_model_picker(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    before = pressing(*"/model", "enter")
    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_keys(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    before = pressing(*"/keys", "enter")
    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_onboarding(snap_compare: SnapCompare, theme: str) -> None:
    assert snap_compare(app_for(None, theme), run_before=settled, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_help(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    assert snap_compare(app_for(fake, theme), run_before=pressing("f1"), terminal_size=SIZE)


def seed_memory() -> None:
    from memory import MemoryStore

    store = MemoryStore().ensure()
    store.write_memory(
        "# About Ana\n\n- Lives in Lisbon\n- Prefers short answers\n- Drinks green tea\n"
    )
    store.append_history("[2026-11-01 09:00] Talked about green tea and where to buy it.")
    store.append_history("[2026-11-02 18:30] Planned a trip to Lisbon in March.")
    for model, outcome, reason, latency, cost in (
        ("llama-3.3-70b-versatile", "failed", "the model failed to call the tool", 0.4, 0.0),
        ("qwen3-32b", "rejected", "did not call save_memory", 1.2, 0.0001),
        ("gpt-4.1-mini", "ok", "", 4.1, 0.0008),
    ):
        store.log(
            {
                "session": "20261102-183000-a1b2c3",
                "segment": "0-12",
                "model": model,
                "outcome": outcome,
                "reason": reason,
                "latency": latency,
                "cost": cost,
            }
        )


@pytest.mark.parametrize("theme", THEMES)
def test_memory_screen(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    seed_memory()
    before = pressing(*"/memory", "enter")
    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_search_screen(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    seed_memory()

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await pilot.press(*"/grep tea", "enter")
        await settled(pilot)

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_log_screen(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    seed_memory()

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await pilot.press(*"/log", "enter")
        await settled(pilot)  # the consolidation chain is shown

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_conflict_dialog(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    from app.screens.conflict import ConflictDialog

    async def before(pilot: Pilot[Any]) -> None:
        pilot.app.push_screen(ConflictDialog("# Me\n- my edit\n", "# Me\n- saved meanwhile\n"))
        await settled(pilot)

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=(130, 36))


@pytest.mark.parametrize("theme", THEMES)
def test_private_session(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await pilot.press(*"/private", "enter")
        await settled(pilot)
        assert isinstance(pilot.app, KeptApp) and pilot.app.session.private

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


@pytest.mark.parametrize("theme", THEMES)
def test_change_dialog(snap_compare: SnapCompare, fake: FakeProvider, theme: str) -> None:
    from app.screens.change import ChangeDialog
    from memory.consolidation.review import unified

    old = "# About Ana\n- Lives in Zürich\n- Drinks green tea\n"
    new = "# About Ana\n- Lives in Lisbon\n- Drinks green tea\n- Plays the cello\n"

    async def before(pilot: Pilot[Any]) -> None:
        pilot.app.push_screen(
            ChangeDialog(
                "Proposed memory change: +2 −1 lines",
                unified(old, new, "MEMORY.md now", "proposed"),
                new,
                [("accept", "Accept"), ("reject", "Reject"), ("later", "Decide later")],
                note="Session 20261102-183000-a1b2c3 · llama-3.3-70b-versatile\nAna moved to "
                "Lisbon and started the cello.",
                editable=True,
            )
        )
        await settled(pilot)

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=(130, 36))


@pytest.mark.parametrize("dialog", [False, True], ids=["list", "delete"])
@pytest.mark.parametrize("theme", THEMES)
def test_sessions_screen(
    snap_compare: SnapCompare, fake: FakeProvider, theme: str, dialog: bool
) -> None:
    from memory import MemoryStore
    from tests.factories import saved_session

    store = MemoryStore().ensure()
    for day, words in ((2, "green tea"), (5, "Lisbon"), (9, "the piano")):
        saved_session(store, words, day)

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await pilot.press("f2")
        await pilot.app.workers.wait_for_complete()
        await until(
            lambda: getattr(pilot.app.focused, "id", None) == "filter", message="the filter"
        )
        await pilot.press(*"saved", "down", "down")  # the live session's date varies
        if dialog:
            await pilot.press("d")
        await settled(pilot)

    assert snap_compare(app_for(fake, theme), run_before=before, terminal_size=SIZE)


# --- every screen at the two small sizes a laptop split or a phone gives (one theme) -------

SMALL = [(80, 24), (60, 20)]


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_chat(snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]) -> None:
    fake.default = text(REPLY, chunks=16)

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await send(pilot, "Write a greeting function")
        await settled(pilot)

    assert snap_compare(app_for(fake, THEMES[0]), run_before=before, terminal_size=size)


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(
    "command",
    ["/model", "/keys", "/memory", "/log", "/grep tea", "/private"],
    ids=lambda c: c[1:].replace(" ", "-"),
)
def test_small_screens(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int], command: str
) -> None:
    seed_memory()
    assert snap_compare(
        app_for(fake, THEMES[0]),
        terminal_size=size,
        run_before=pressing(*command, "enter"),
    )


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_help(snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]) -> None:
    assert snap_compare(app_for(fake, THEMES[0]), terminal_size=size, run_before=pressing("f1"))


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_onboarding(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(app_for(None, THEMES[0]), run_before=settled, terminal_size=size)


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_change_dialog(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    from app.screens.change import ChangeDialog
    from memory.consolidation.review import unified

    old = "# About Ana\n- Lives in Zürich\n- Drinks green tea\n"
    new = "# About Ana\n- Lives in Lisbon\n- Drinks green tea\n- Plays the cello\n"

    async def before(pilot: Pilot[Any]) -> None:
        pilot.app.push_screen(
            ChangeDialog(
                "Proposed memory change: +2 −1 lines",
                unified(old, new, "MEMORY.md now", "proposed"),
                new,
                [("accept", "Accept"), ("reject", "Reject"), ("later", "Decide later")],
                note="Session 20261102-183000-a1b2c3 · llama-3.3-70b-versatile",
                editable=True,
            )
        )
        await settled(pilot)

    assert snap_compare(app_for(fake, THEMES[0]), run_before=before, terminal_size=size)


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_conflict_dialog(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    from app.screens.conflict import ConflictDialog

    async def before(pilot: Pilot[Any]) -> None:
        pilot.app.push_screen(ConflictDialog("# Me\n- my edit\n", "# Me\n- saved meanwhile\n"))
        await settled(pilot)

    assert snap_compare(app_for(fake, THEMES[0]), run_before=before, terminal_size=size)


@pytest.mark.parametrize("size", [(120, 30), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_versions_fit_on_one_line(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    from memory import MemoryStore

    seed_memory()
    store = MemoryStore()
    store.save_version(
        b"# About Ana\n",
        "consolidation",
        time="2026-11-20T09:15:00+00:00",
        session="20261120-091500-a1b2c3",
        model="llama3.2",
    )
    store.save_version(
        b"# About Ana\n\n- Lives in Lisbon\n",
        "consolidation",
        time="2026-11-30T10:00:00+00:00",
        session="20261130-100000-d4e5f6",
        model="llama-4-scout-17b-16e-instruct",
    )
    store.save_version(b"# Me\n", "edit", time="2026-11-30T11:00:00+00:00")

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await pilot.press(*"/memory", "enter", "4")  # 4: the Versions tab
        await settled(pilot)

    assert snap_compare(app_for(fake, THEMES[0]), run_before=before, terminal_size=size)
