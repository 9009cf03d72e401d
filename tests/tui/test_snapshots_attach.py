"""Screenshots of attachments in the chat at 80x24 and 60x20: the composer carrying two
chips, and the notice when a message does not fit the model's window.

Update after an intended change with: .venv/bin/python -m pytest
tests/tui/test_snapshots_attach.py --snapshot-update, then look at the SVGs before committing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.paths import escape
from app.widgets.composer import Chips, Composer
from tests.fakes.provider import FakeProvider
from tests.support import SMALL, make_app, small_window_entries, until
from tests.tui.pictures import SnapCompare, settled

SIZES = [(80, 24), (60, 20)]
CLOCK = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)


async def _attach(pilot: Pilot[Any], *files: Path) -> None:
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    composer = pilot.app.focused
    assert isinstance(composer, Composer)
    composer.insert("/attach " + " ".join(escape(str(f)) for f in files))
    await pilot.press("enter")
    chips = pilot.app.query_one(Chips)
    await until(lambda: len(chips.attachments) == len(files), message="the files read")
    await pilot.pause()


def _files(folder: Path) -> tuple[Path, Path]:
    notes = folder / "meeting notes.md"
    notes.write_text("# Meeting\n\n- ship attachments\n- measure the PDF path\n" * 40)
    config = folder / "kept.toml"
    config.write_text('[app]\nmodel = "gpt-4.1-mini"\n' * 10)
    return notes, config


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_composer_with_two_chips(
    snap_compare: SnapCompare, fake: FakeProvider, tmp_path: Path, size: tuple[int, int]
) -> None:
    files = _files(tmp_path)

    async def before(pilot: Pilot[Any]) -> None:
        await _attach(pilot, *files)
        await pilot.press(*"What changed?")
        await settled(pilot)

    app = make_app(fake, clock=lambda: CLOCK)
    assert snap_compare(app, run_before=before, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_too_big_for_the_window(
    snap_compare: SnapCompare, fake: FakeProvider, tmp_path: Path, size: tuple[int, int]
) -> None:
    big = tmp_path / "server.log"
    big.write_text("GET /health 200 in 3 ms from 10.0.0.7\n" * 1_000)

    async def before(pilot: Pilot[Any]) -> None:
        await _attach(pilot, big)
        await pilot.press(*"Why is it slow?", "enter")
        await settled(pilot)

    app = make_app(fake, clock=lambda: CLOCK, model=SMALL, entries=small_window_entries())
    assert snap_compare(app, run_before=before, terminal_size=size)
