"""Fixtures of the end-to-end tests: a real terminal."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.terminal import Terminal, require


@pytest.fixture
def terminal(request: pytest.FixtureRequest) -> Iterator[Terminal]:
    """A tmux server of this test's own (the test is skipped where tmux is missing); it and
    whatever still runs in it are stopped when the test ends, passed or failed."""
    require("tmux")
    terminal = Terminal(re.sub(r"[^\w-]", "-", request.node.name)[:60])
    yield terminal
    terminal.kill()
