"""Screenshots of the chat states that break layouts, at 80x24 and 60x20: an error notice,
a reply cut off mid-stream, a reply from a fallback model (its long label), a tool call.
Each is driven through the loopback fake provider with a scripted fault.

Update after an intended change with: .venv/bin/python -m pytest
tests/tui/test_snapshots_states.py --snapshot-update, then look at the SVGs before committing.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.main import KeptApp
from app.mcp_settings import mcp_settings
from app.settings import config_path
from tests.fakes.provider import FakeProvider, cut, http_error, text, tool_call
from tests.support import make_app, send, until
from tests.tui.pictures import SnapCompare, settled

SIZES = [(80, 24), (60, 20)]
CLOCK = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)
MODEL = "gpt-4.1-mini"
SERVER = Path(__file__).parents[1] / "mcp_tool_server.py"


def ids(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def app_for(fake: FakeProvider) -> KeptApp:
    return make_app(fake, clock=lambda: CLOCK)


def asking(words: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A run_before that sends `words` and waits for the reply and the screen to settle."""

    async def before(pilot: Pilot[Any]) -> None:
        await send(pilot, words)
        await settled(pilot)

    return before


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_an_error_notice(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    fake.default = http_error(401)  # every model refuses the key: the notice says what next
    assert snap_compare(app_for(fake), run_before=asking("hello"), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_a_reply_cut_off_mid_stream(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    fake.script(MODEL, cut(after_chunks=6))
    assert snap_compare(app_for(fake), run_before=asking("tell me a story"), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_a_reply_from_a_fallback_model(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    fake.set_default(MODEL, http_error(500))
    fake.default = text("From the backup model, a short answer.")
    assert snap_compare(app_for(fake), run_before=asking("hello"), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_a_tool_call(snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]) -> None:
    from app.screens.consent import ConsentDialog

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    server = f'command = "{sys.executable}"\nargs = ["{SERVER}"]\nenabled = true\n'
    path.write_text(f"[mcp.servers.web]\n{server}")
    fake.script(MODEL, tool_call("web__weather", {"city": "Lisbon"}), text("Sunny, it says."))
    app = app_for(fake)
    app.settings = replace(app.settings, mcp=mcp_settings(path))

    async def before(pilot: Pilot[Any]) -> None:
        from app.screens.chat import ChatScreen
        from app.widgets.composer import Composer

        await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer")
        await pilot.press(*"Weather in Lisbon?", "enter")
        await until(
            lambda: isinstance(pilot.app.screen, ConsentDialog), message="the prompt", deadline=120
        )
        await pilot.press("y")
        await until(lambda: isinstance(pilot.app.screen, ChatScreen), message="the chat")
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        await screen.reply_finished()
        await settled(pilot)

    assert snap_compare(app, run_before=before, terminal_size=size)
