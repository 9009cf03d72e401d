"""End to end: attach a file in the real `kept` in tmux, send it, and see it in the chat,
in /sessions' transcript and in /export's Markdown and files."""

from __future__ import annotations

from pathlib import Path

from app.settings import config_path
from memory import MemoryStore
from tests.fakes.provider import FakeProvider, text
from tests.support import gateways_toml, terminal_env
from tests.terminal import KEPT, Terminal


def test_attach_send_and_find_it_in_sessions_and_export(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    fake.set_default("gpt-4.1-mini", text("Three retries, ten seconds."))
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake) + '[app]\nmodel = "gpt-4.1-mini"\n')
    (tmp_path / "work").mkdir()
    notes = tmp_path / "work" / "retry notes.txt"
    notes.write_text("retries = 3\ntimeout = 10\n")
    env = terminal_env(tmp_path)
    exported = tmp_path / "out" / "walk.md"
    exported.parent.mkdir()
    terminal.start([str(KEPT)], env)
    terminal.wait_until(lambda s: "Message Kept" in s, "the chat screen")
    terminal.type("/attach ~/work/ret")
    terminal.keys("Tab")
    terminal.wait_until(lambda s: "/attach ~/work/retry\\ notes.txt" in s, "the completion")
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "retry notes.txt · 25 bytes · ~" in s, "the chip")
    terminal.type("What do these settings say?")
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "Three retries, ten seconds." in s, "the reply")
    assert "+ retry notes.txt · 25 bytes" in terminal.screen()
    terminal.type(f"/export {exported}")
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "Session exported" in s, "the export")
    terminal.keys("F2")
    terminal.wait_until(lambda s: "newest first" in s, "the sessions list")
    terminal.keys("Enter")
    terminal.keys("Enter")
    terminal.wait_until(
        lambda s: "What do these settings say?" in s and "+ retry notes.txt" in s,
        "the transcript with its attachment",
    )
    terminal.keys("Escape")
    terminal.keys("C-q")
    terminal.wait_until(lambda s: terminal.exited(), "kept to quit", timeout=30)
    (live,) = MemoryStore().active_sessions()
    (sent,) = [m for m in live.messages if m.get("role") == "user"]
    assert [a["name"] for a in sent["attachments"]] == ["retry notes.txt"]
    markdown = exported.read_text()
    assert "retry notes.txt" in markdown
    (copy,) = (exported.parent / "walk_files").iterdir()
    assert copy.read_text() == notes.read_text()
