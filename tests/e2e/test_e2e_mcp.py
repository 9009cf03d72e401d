"""End to end in tmux: turn on a tool server in /tools, the model (the fake provider) calls
one of its tools, the user allows it with y, and the result feeds the reply."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from app.settings import config_path
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import gateways_toml, terminal_env
from tests.terminal import KEPT, Terminal

SERVER = Path(__file__).parents[1] / "mcp_tool_server.py"


def test_enable_a_server_approve_a_call_and_the_result_feeds_the_reply(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    fake.script(
        "gpt-4.1-mini",
        tool_call("web__weather", {"city": "Lisbon"}),
        text("It is sunny in Lisbon today."),
    )
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        gateways_toml(fake)
        + '[app]\nmodel = "gpt-4.1-mini"\n\n'
        + f'# the weather, for tests\n[mcp.servers.web]\ncommand = "{sys.executable}"\n'
        + f'args = ["{SERVER}"]\n'
    )
    env = terminal_env(tmp_path)
    terminal.start([str(KEPT)], env)
    terminal.wait_until(lambda s: "Message Kept" in s, "the chat screen")
    terminal.type("/tools")
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "○ web  off" in s, "/tools with the server off")
    terminal.keys("Space")
    terminal.wait_until(lambda s: "● web  on · 9 tools" in s, "the server on", timeout=120)
    terminal.keys("Escape")
    terminal.wait_until(lambda s: "Message Kept" in s, "the chat again")
    terminal.type("What is the weather in Lisbon?")
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "Run weather from web?" in s, "the consent prompt")
    terminal.keys("y")
    screen = terminal.wait_until(
        lambda s: "It is sunny in Lisbon today." in s, "the reply", timeout=120
    )
    assert "tool web · weather — ran" in screen
    terminal.keys("C-q")
    terminal.wait_until(lambda s: terminal.exited(), "kept to quit", timeout=30)
    first, second = fake.requests
    assert "web__weather" in [t["function"]["name"] for t in first.body["tools"]]
    results = [m["content"] for m in second.body["messages"] if m.get("role") == "tool"]
    assert results == ["Sunny and 21 degrees in Lisbon."]
    written = path.read_text()
    assert "# the weather, for tests" in written
    assert tomllib.loads(written)["mcp"]["servers"]["web"]["enabled"] is True
