"""End to end: the real `kept` command in a real terminal (tmux), against the fake provider."""

from __future__ import annotations

from pathlib import Path

from app.settings import config_path
from memory import MemoryStore
from tests.factories import saved_session
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import (
    gateways_toml,
    nothing_new,
    save_args,
    terminal_env,
    until_blocking,
)
from tests.terminal import KEPT, Terminal


def test_chat_new_session_and_quit_write_memory(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    fake.default = text("Hello from the fake provider.")
    fake.set_default(
        "llama-3.3-70b-versatile",
        tool_call("save_memory", save_args(entry="Ana said hello from a real terminal.")),
    )
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    env = terminal_env(tmp_path)
    terminal.start([str(KEPT)], env)
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
    store = MemoryStore()
    assert store.memory_path.read_text() == "# About the user\n- Name: Ana\n"  # save_args()'s
    (entry,) = store.history_entries()
    assert entry.body.endswith("Ana said hello from a real terminal.")
    sent = fake.requests[0].body["messages"]
    assert sent[-1] == {"role": "user", "content": "Hello, I'm Ana, from a real terminal"}


def test_kept_ask_on_a_terminal_renders_markdown(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    fake.set_default("gpt-4.1-mini", text("# Plan\n\n- **pack** the `tent`\n- go", chunks=6))
    fake.default = tool_call("save_memory", nothing_new("Asked for a camping plan."))
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    env = terminal_env(tmp_path)
    terminal.start([str(KEPT), "ask", "a camping plan"], env)
    screen = terminal.wait_until(
        lambda s: terminal.exited() and "tent" in s, "the answer and the exit"
    )
    assert "• pack the tent" in screen  # rendered: a bullet, no ** or backticks
    assert "**" not in screen and "`" not in screen
    history = MemoryStore().history_path
    until_blocking(  # saved by a process of its own, after the exit
        lambda: history.exists() and "Asked for a camping plan." in history.read_text(),
        deadline=90,
        message="the exchange to be saved to memory",
    )


def test_continue_a_past_session_from_the_sessions_browser(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    store = MemoryStore().ensure()
    lisbon = saved_session(store, "Lisbon", 5)
    fake.set_default("gpt-4.1-mini", text("May is best."))
    fake.default = tool_call("save_memory", nothing_new("Ana chose May."))
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    env = terminal_env(tmp_path)
    terminal.start([str(KEPT)], env)
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
    journal = store.find_session(lisbon)
    assert [(s.start, s.end) for s in journal.consolidated] == [(0, 2), (2, 4)]
    assert journal.path.parent == store.done_dir
    assert "Ana chose May." in store.history_path.read_text()
