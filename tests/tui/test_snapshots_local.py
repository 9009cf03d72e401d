"""Screenshots of a local model whose id is its file's path, as llama-cpp-python lists it
when started without --model_alias: the status bar stays one line, the picker's columns
stay apart (pytest-textual-snapshot; update with --snapshot-update, then look)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from app.main import KeptApp
from app.widgets.status_bar import StatusBar
from catalog.config import local_model
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, send
from tests.tui.pictures import (
    CLOCK,
    SHOWN_MODELS,
    SIZE,
    SnapCompare,
    composer_ready,
    pressing,
    settled,
)

PATH = "/home/ana/models/SmolLM2-135M-Instruct.Q4_1.gguf"
SMALL = [(80, 24), (60, 20)]


def app_for(fake: FakeProvider) -> KeptApp:
    """The app chatting with the local model, as onboarding saved it."""
    return make_app(
        fake,
        theme="kept-dark",
        clock=lambda: CLOCK,
        entries=(*SHOWN_MODELS, local_model(PATH)),
        model=PATH,
    )


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_status_bar_of_a_model_named_by_its_path(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    fake.default = text("Hello Ana, from your local model.")

    async def before(pilot: Pilot[Any]) -> None:
        await composer_ready(pilot)
        await send(pilot, "Hello")
        bar = pilot.app.screen.query_one(StatusBar)
        shown = str(bar.render())
        # One line, the label cut, the memory state and the tokens in sight.
        assert bar.region.height == 1
        assert shown.startswith("SmolLM2-") and "/home" not in shown
        assert bar.memory in shown and f"{bar.tokens:,} tokens" in shown
        await settled(pilot)

    assert snap_compare(app_for(fake), run_before=before, terminal_size=size)


def test_the_model_picker_with_a_model_named_by_its_path(
    snap_compare: SnapCompare, fake: FakeProvider
) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await pressing(*"/model", "enter")(pilot)
        from textual.widgets import OptionList

        picker = pilot.app.screen.query_one(OptionList)
        row = str(picker.get_option(PATH).prompt).splitlines()[0]
        # The label, cut to its column, then a space before the tier: "…Q4_1 local".
        assert row.startswith("● SmolLM2-135M-Instruc")
        assert " local " in row and "gguf" not in row

    assert snap_compare(app_for(fake), run_before=before, terminal_size=SIZE)
