"""End to end: the real `kept` command in a real terminal (tmux), against the fake provider."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.settings import config_path
from memory import MemoryStore
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import (
    gateways_toml,
    nothing_new,
    save_args,
    terminal_env,
)

KEPT = Path(sys.executable).with_name("kept")

if shutil.which("tmux") is None:
    if os.environ.get("CI"):
        raise RuntimeError("tmux is missing: .ci/run installs it")
    pytest.skip("tmux is not installed", allow_module_level=True)


class Terminal:
    """A tmux server of our own with one window running a command."""

    def __init__(self, name: str) -> None:
        self.socket = f"kept-test-{os.getpid()}-{name}"

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        ).stdout

    def start(
        self, command: list[str], env: dict[str, str], size: tuple[int, int] = (100, 30)
    ) -> None:
        exports = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "kept",
                "-x",
                str(size[0]),
                "-y",
                str(size[1]),
                *exports,
                *command,
            ],
            check=True,
        )
        self.tmux("set-option", "-t", "kept", "remain-on-exit", "on")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "kept")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "kept", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "kept", "-l", text)

    def paste(self, text: str) -> None:
        """One bracketed paste: a single event, so no focus change can land mid-text."""
        self.tmux("set-buffer", "-b", "kept", text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "kept", "-t", "kept")

    def fill(self, text: str) -> None:
        """Replace the focused field's text with `text` and wait to see it. Keys sent the
        instant a dialog is drawn may precede its focus, and an Input's select-all on focus
        may land between keys: clear and paste until the screen shows it."""
        for attempt in range(5):
            self.keys("C-e", "C-u")
            self.paste(text)
            try:
                self.wait_until(lambda s: text in s, "the text typed", timeout=10)
                return
            except AssertionError:
                if attempt == 4:
                    raise

    def wait_until(self, condition: Callable[[str], bool], what: str, timeout: float = 60.0) -> str:
        """Poll the screen until `condition` holds: the terminal has no event to wait on."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{self.screen()}")

    def exited(self) -> bool:
        return self.tmux("display-message", "-p", "-t", "kept", "#{pane_dead}").strip() == "1"

    def kill(self) -> None:
        """Stop tmux and whatever still runs in its pane (a command under strace outlives
        the pane's hang-up)."""
        pane = self.tmux("display-message", "-p", "-t", "kept", "#{pane_pid}").strip()
        self.tmux("kill-server")
        if pane.isdigit():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(pane), signal.SIGKILL)


def test_chat_new_session_and_quit_write_memory(fake: FakeProvider, tmp_path: Path) -> None:
    fake.default = text("Hello from the fake provider.")
    fake.set_default(
        "llama-3.3-70b-versatile",
        tool_call("save_memory", save_args(entry="Ana said hello from a real terminal.")),
    )
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    env = terminal_env(tmp_path)
    terminal = Terminal("e2e")
    terminal.start([str(KEPT)], env)
    try:
        terminal.wait_until(lambda s: "Message Kept" in s, "the chat screen")
        terminal.type("Hello, I'm Ana, from a real terminal")
        terminal.keys("Enter")
        terminal.wait_until(lambda s: "Hello from the fake provider." in s, "the reply")
        terminal.type("/new")
        terminal.keys("Enter")
        terminal.wait_until(
            lambda s: "Memory saved (llama-3.3-70b-versatile" in s, "memory to be saved"
        )
        terminal.keys("C-q")
        terminal.wait_until(lambda s: terminal.exited(), "kept to quit", timeout=30)
    finally:
        terminal.kill()
    store = MemoryStore()
    assert store.memory_path.read_text() == save_args()["memory_update"]
    (entry,) = store.history_entries()
    assert entry.text.endswith("Ana said hello from a real terminal.")
    sent = fake.requests[0].body["messages"]
    assert sent[-1] == {"role": "user", "content": "Hello, I'm Ana, from a real terminal"}


def test_kept_ask_on_a_terminal_renders_markdown(fake: FakeProvider, tmp_path: Path) -> None:
    fake.set_default("gpt-4.1-mini", text("# Plan\n\n- **pack** the `tent`\n- go", chunks=6))
    fake.default = tool_call("save_memory", nothing_new("Asked for a camping plan."))
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    env = terminal_env(tmp_path)
    terminal = Terminal("ask")
    terminal.start([str(KEPT), "ask", "a camping plan"], env)
    try:
        screen = terminal.wait_until(
            lambda s: terminal.exited() and "tent" in s, "the answer and the exit"
        )
    finally:
        terminal.kill()
    assert "• pack the tent" in screen  # rendered: a bullet, no ** or backticks
    assert "**" not in screen and "`" not in screen
    history = MemoryStore().history_path
    deadline = time.monotonic() + 90  # saved by a process of its own, after the exit
    while not (history.exists() and "Asked for a camping plan." in history.read_text()):
        assert time.monotonic() < deadline, "the exchange was not saved to memory"
        time.sleep(0.1)


def test_continue_a_past_session_from_the_sessions_browser(
    fake: FakeProvider, tmp_path: Path
) -> None:
    from tests.tui.test_sessions import saved_session

    store = MemoryStore().ensure()
    lisbon = saved_session(store, "Lisbon", 5)
    fake.set_default("gpt-4.1-mini", text("May is best."))
    fake.default = tool_call("save_memory", nothing_new("Ana chose May."))
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    env = terminal_env(tmp_path)
    terminal = Terminal("continue")
    terminal.start([str(KEPT)], env)
    try:
        terminal.wait_until(lambda s: "Message Kept" in s, "the chat screen")
        terminal.keys("F2")
        terminal.wait_until(lambda s: "Ana asked about Lisbon." in s, "the sessions list")
        terminal.type("Lisbon")
        terminal.wait_until(lambda s: "1 of 2 sessions" in s, "the filter")
        terminal.keys("Down")
        terminal.keys("c")
        terminal.wait_until(
            lambda s: "Lisbon is lovely." in s and "Message Kept" in s,
            "the continued session in the chat",
        )
        terminal.type("When should I go?")
        terminal.keys("Enter")
        terminal.wait_until(lambda s: "May is best." in s, "the reply")
        terminal.type("/new")
        terminal.keys("Enter")
        terminal.wait_until(lambda s: "Memory saved (" in s, "the new segment to be saved")
        terminal.keys("C-q")
        terminal.wait_until(lambda s: terminal.exited(), "kept to quit", timeout=30)
    finally:
        terminal.kill()
    journal = store.find_session(lisbon)
    assert [(s.start, s.end) for s in journal.consolidated] == [(0, 2), (2, 4)]
    assert journal.path.parent == store.done_dir
    assert "Ana chose May." in store.history_path.read_text()
