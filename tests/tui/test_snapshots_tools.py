"""Screenshots of /tools and of a tool's consent prompt at 80x24 and 60x20.

Update after an intended change with: .venv/bin/python -m pytest
tests/tui/test_snapshots_tools.py --snapshot-update, then look at the SVGs before committing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.widgets.composer import Composer
from catalog.mcp import McpTool, ServerSpec, ServerState, ToolBox
from tests.fakes.provider import FakeProvider
from tests.support import make_app, until
from tests.tui.pictures import SnapCompare, settled

SIZES = [(80, 24), (60, 20)]
CLOCK = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def toolbox() -> ToolBox:
    """Three servers: one on with its tools listed (set here, no process), one off, one
    that failed to start."""
    box = ToolBox(
        [
            ServerSpec(
                "weather",
                command="uvx",
                args=("mcp-weather",),
                enabled=True,
                allowed_tools=("forecast",),
            ),
            ServerSpec("files", command="npx", args=("-y", "@modelcontextprotocol/server-fs")),
            ServerSpec("search", url="https://search.example/mcp", enabled=True),
        ]
    )
    weather = box.servers["weather"]
    weather.tools = (
        McpTool("weather", "forecast", "Tomorrow's weather in a city.", SCHEMA),
        McpTool("weather", "alerts", "Weather alerts for a region.", SCHEMA),
    )
    weather.state = ServerState.READY
    box.allow(weather.tools[0])
    failed = box.servers["search"]
    failed.state, failed.reason = ServerState.FAILED, "could not start (401 Unauthorized)"
    return box


async def _ready(pilot: Pilot[Any]) -> None:
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_tools_screen(
    snap_compare: SnapCompare, fake: FakeProvider, tmp_path: Path, size: tuple[int, int]
) -> None:
    from app.screens.tools import ToolsScreen

    async def before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.app.push_screen(ToolsScreen(toolbox(), tmp_path / "config.toml", []))
        await settled(pilot)

    assert snap_compare(make_app(fake, clock=lambda: CLOCK), run_before=before, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_consent_prompt(
    snap_compare: SnapCompare, fake: FakeProvider, size: tuple[int, int]
) -> None:
    from app.screens.consent import ConsentDialog

    tool = toolbox().servers["weather"].tools[1]

    async def before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        pilot.app.push_screen(ConsentDialog(tool, '{"region": "Lisbon", "days": 3}'))
        await settled(pilot)

    assert snap_compare(make_app(fake, clock=lambda: CLOCK), run_before=before, terminal_size=size)
