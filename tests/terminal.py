"""A real terminal for end-to-end tests: a tmux server of the test's own, one window."""

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

KEPT = Path(sys.executable).with_name("kept")


def require(*tools: str) -> None:
    """Skip the test (or the module, at its top) when a tool is missing; on CI, fail."""
    for tool in tools:
        if shutil.which(tool) is None:
            if os.environ.get("CI"):
                raise RuntimeError(f"{tool} is missing: .ci/run installs it")
            pytest.skip(f"{tool} is not installed", allow_module_level=True)


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
        width, height = (str(n) for n in size)
        tmux = ["tmux", "-L", self.socket, "-f", "/dev/null"]
        window = ["new-session", "-d", "-s", "kept", "-x", width, "-y", height]
        subprocess.run([*tmux, *window, *exports, *command], check=True)
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
