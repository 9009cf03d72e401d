"""End to end in tmux: the keys a terminal really sends, and a first hour at 80x24."""

from __future__ import annotations

import os
from pathlib import Path

from catalog import config_path
from tests.fakes.provider import FakeProvider, text
from tests.support import FAKE_GATEWAYS, fake_keys
from tests.test_e2e import KEPT, Terminal


def _environment(fake: FakeProvider, tmp_path: Path, *, keys: bool = True) -> dict[str, str]:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f'[gateways.{g}]\nbase_url = "{fake.base_url(g)}"\n\n'
                            for g in FAKE_GATEWAYS) + '[app]\nmodel = "gpt-4.1-mini"\n')
    return {"KEPT_DATA_DIR": os.environ["KEPT_DATA_DIR"],
            "KEPT_CONFIG_DIR": os.environ["KEPT_CONFIG_DIR"],
            "HOME": str(tmp_path), "TERM": "xterm-256color", "PYTHON_KEYRING_BACKEND":
            "keyring.backends.fail.Keyring", **(fake_keys() if keys else {})}


def test_alt_enter_adds_a_line_as_the_terminal_sends_it(fake: FakeProvider,
                                                        tmp_path: Path) -> None:
    """tmux's M-Enter and the raw ESC CR of xterm-style terminals add a line; Enter sends."""
    fake.default = text("Three lines received.")
    terminal = Terminal("alt-enter")
    terminal.start([str(KEPT)], _environment(fake, tmp_path), size=(80, 24))
    try:
        terminal.wait_until(lambda s: "Message Kept" in s, "the chat screen")
        terminal.type("line one")
        terminal.keys("M-Enter")
        terminal.wait_until(lambda s: "line one" in s, "the first line")
        terminal.type("line two")
        terminal.tmux("send-keys", "-t", "kept", "-H", "1b", "0d")  # ESC CR, byte for byte
        terminal.type("line three")
        screen = terminal.wait_until(lambda s: "line three" in s, "the third line")
        assert not fake.requests, f"Alt+Enter sent the message:\n{screen}"
        lines = screen.splitlines()
        first = next(i for i, line in enumerate(lines) if "line one" in line)
        assert "line two" in lines[first + 1] and "line three" in lines[first + 2], screen
        terminal.keys("Enter")
        terminal.wait_until(lambda s: "Three lines received." in s, "the reply")
    finally:
        terminal.kill()
    sent = fake.requests[0].body["messages"]
    assert sent[-1]["content"] == "line one\nline two\nline three"
