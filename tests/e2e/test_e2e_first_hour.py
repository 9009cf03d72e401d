"""End to end in tmux: the keys a terminal really sends, and a first hour at 80x24."""

from __future__ import annotations

from pathlib import Path

from app.settings import config_path
from tests.fakes.provider import FakeProvider, text
from tests.support import gateways_toml, terminal_env
from tests.terminal import KEPT, Terminal


def _environment(fake: FakeProvider, tmp_path: Path, *, keys: bool = True) -> dict[str, str]:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    return terminal_env(tmp_path, keys=keys)


def test_alt_enter_adds_a_line_as_the_terminal_sends_it(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    """tmux's M-Enter and the raw ESC CR of xterm-style terminals add a line; Enter sends."""
    fake.default = text("Three lines received.")
    terminal.start([str(KEPT)], _environment(fake, tmp_path), size=(80, 24))
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
    sent = fake.requests[0].body["messages"]
    assert sent[-1]["content"] == "line one\nline two\nline three"


def test_a_first_hour_at_80x24_shows_every_screen_whole(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    """Onboarding → chat → /new → /memory → /keys → quit, in a 80x24 terminal: each screen
    shows its text whole (the status bar's cost, /memory's keys, /keys' buttons)."""
    import json

    from tests.support import save_args

    fake.served = ["llama3.2"]
    fake.script(
        "llama3.2",
        text("ok"),
        text("Hello Ana, from your local model."),
        text(json.dumps(save_args(entry="Ana said hello."))),
    )
    env = terminal_env(tmp_path, keys=False)
    url = fake.base_url("local").removesuffix("/v1")
    terminal.start([str(KEPT)], env, size=(80, 24))
    terminal.wait_until(
        lambda s: "Or a local server" in s and "Use local server" in s,
        "the welcome screen, its buttons in sight",
    )
    terminal.fill(url)
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "pick one with the arrows" in s, "the server's models")
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "Message Kept" in s and "Or a local server" not in s, "the chat")
    terminal.type("Hello, I'm Ana.")
    terminal.keys("Enter")
    screen = terminal.wait_until(
        lambda s: "Hello Ana, from your local model." in s and "$0." in s,
        "the reply and the whole status bar",
    )
    assert "llama3.2 · " in screen
    terminal.type("/new")
    terminal.keys("Enter")
    # A local model's change waits for the user (review = "auto"): Ctrl+R, then a.
    terminal.wait_until(
        lambda s: "memory change to review" in s and "New session started." in s,
        "the change to review",
    )
    terminal.keys("C-r")
    terminal.wait_until(lambda s: "Proposed memory change" in s, "the proposed change")
    terminal.keys("a")
    terminal.wait_until(lambda s: "Memory change accepted and saved." in s, "the save")
    terminal.type("/memory")
    terminal.keys("Enter")
    terminal.wait_until(
        lambda s: "Name: Ana" in s and "1–5: tabs" in s, "/memory with its keys in sight"
    )
    terminal.keys("3")  # 1 MEMORY.md, 2 INSTRUCTIONS.md, 3 History
    terminal.wait_until(lambda s: "Ana said hello." in s, "the history tab")
    terminal.keys("Escape")
    terminal.wait_until(lambda s: "Message Kept" in s, "the chat again")
    terminal.type("/keys")
    terminal.keys("Enter")
    terminal.wait_until(
        lambda s: (
            "API keys" in s and "DEEPSEEK_API_KEY" in s and "Close" in s and "No OS keyring" in s
        ),
        "/keys whole: every gateway, the buttons, the keyring note",
    )
    terminal.keys("Escape")
    terminal.wait_until(lambda s: "Message Kept" in s, "the chat again")
    terminal.keys("C-q")
    terminal.wait_until(lambda s: terminal.exited(), "kept to quit", timeout=60)
