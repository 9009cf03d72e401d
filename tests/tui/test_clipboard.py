"""/copy says how it copied: with the system's clipboard tool (a real program on PATH here,
a small script standing in for xclip), or only through the terminal (OSC 52), which Kept
cannot know reached anything; a tool that fails or hangs falls back and says so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import clipboard
from app.clipboard import copy_with_tool
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, send, until

REPLY = "Grüße: `ls -la` lists every file ✓"
FALLBACK = (
    "if your terminal ignores OSC 52, nothing was copied: /export saves this session to a file."
)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The only folder on PATH, on an X display: no clipboard tool unless a test puts one."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return folder


def program(folder: Path, name: str, body: str) -> None:
    """An executable Python script `name` in `folder`."""
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(0o755)


def fake_xclip(folder: Path, out: Path) -> None:
    """xclip that writes its standard input and its arguments to `out` and its sibling."""
    program(
        folder,
        "xclip",
        f"open({str(out)!r}, 'wb').write(sys.stdin.buffer.read())\n"
        f"open({str(out.with_suffix('.args'))!r}, 'w').write(' '.join(sys.argv[1:]))",
    )


async def copied(fake: FakeProvider) -> tuple[list[str], str | None]:
    """The notices after /copy of a reply, and what Kept's own clipboard holds."""
    fake.default = text(REPLY)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "how do I list files?")
        before = len(app.notices)
        await pilot.press(*"/copy", "enter")
        await until(
            lambda: any("OSC 52" in n or "Copied" in n for n in app.notices[before:]),
            message="the copy",
        )
        return app.notices[before:], app.clipboard


async def test_copy_with_a_clipboard_tool_says_which(
    fake: FakeProvider, bin_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "clipboard.txt"
    fake_xclip(bin_dir, out)
    notices, clipboard = await copied(fake)
    assert notices == [f"Copied {len(REPLY)} characters with xclip."]
    assert out.read_text(encoding="utf-8") == REPLY
    assert out.with_suffix(".args").read_text() == "-selection clipboard"
    assert clipboard == REPLY  # what a paste inside Kept reads


async def test_copy_without_a_tool_says_the_terminal_may_ignore_it(
    fake: FakeProvider, bin_dir: Path
) -> None:
    notices, clipboard = await copied(fake)
    assert notices == [
        f"Sent {len(REPLY)} characters to the terminal's clipboard (OSC 52); {FALLBACK}"
    ]
    assert clipboard == REPLY


async def test_a_tool_that_fails_falls_back_and_says_why(fake: FakeProvider, bin_dir: Path) -> None:
    program(
        bin_dir,
        "xclip",
        'sys.stdin.read()\nprint("Error: Can\'t open display: :0", file=sys.stderr)\nsys.exit(1)',
    )
    notices, clipboard = await copied(fake)
    assert notices == [
        "xclip failed (exit status 1: Error: Can't open display: :0), so Kept sent "
        f"{len(REPLY)} characters to the terminal's clipboard (OSC 52) instead; {FALLBACK}"
    ]
    assert clipboard == REPLY


async def test_a_tool_that_hangs_is_given_up_and_falls_back(
    fake: FakeProvider, bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program(bin_dir, "xclip", "sys.stdin.read()\ntime.sleep(600)")
    monkeypatch.setattr(clipboard, "TIMEOUT", 1.0)
    notices, _ = await copied(fake)
    assert notices == [
        f"xclip did not finish within 1 s, so Kept sent {len(REPLY)} characters to the "
        f"terminal's clipboard (OSC 52) instead; {FALLBACK}"
    ]


def test_tools_need_their_display_and_the_first_found_is_used(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "clipboard.txt"
    fake_xclip(bin_dir, out)
    program(bin_dir, "wl-copy", "sys.exit(3)")
    monkeypatch.delenv("DISPLAY")
    assert copy_with_tool("x").tool is None  # xclip is there, but no X display is
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert copy_with_tool("x").problem == "wl-copy failed (exit status 3)"
    monkeypatch.delenv("WAYLAND_DISPLAY")
    monkeypatch.setenv("DISPLAY", ":0")
    assert copy_with_tool("naïve").copied
    assert out.read_text(encoding="utf-8") == "naïve"
