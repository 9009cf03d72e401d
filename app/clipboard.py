"""The system clipboard through the platform's own tool, where there is one (wl-copy, xclip,
xsel, pbcopy, clip.exe): its exit status is the only sign Kept can have that a copy arrived.
Without one, the app sends the text to the terminal (OSC 52), which may ignore it silently."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from catalog.sanitize import clean_text

# Each tool, the variable naming the display it needs (None: none), and the arguments that
# make it put its standard input on the clipboard. The first found that can work is used.
TOOLS: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("wl-copy", "WAYLAND_DISPLAY", ()),
    ("xclip", "DISPLAY", ("-selection", "clipboard")),
    ("xsel", "DISPLAY", ("--clipboard", "--input")),
    ("pbcopy", None, ()),
    ("clip.exe", None, ()),
)
TIMEOUT = 5.0  # seconds; a tool that waits longer for its display is given up


@dataclass(frozen=True)
class ToolCopy:
    """What became of a copy with a clipboard tool."""

    tool: str | None  # the tool tried; None: there is none here
    problem: str | None = None  # why it did not copy, as the start of a sentence

    @property
    def copied(self) -> bool:
        return self.tool is not None and self.problem is None


def find_tool() -> list[str] | None:
    """The command of the first clipboard tool on PATH whose display is there."""
    for name, display, arguments in TOOLS:
        if display is not None and not os.environ.get(display):
            continue
        path = shutil.which(name)
        if path is not None:
            return [path, *arguments]
    return None


def copy_with_tool(text: str, timeout: float | None = None) -> ToolCopy:
    """Put `text` on the system clipboard with the first tool found. It blocks for up to
    `timeout` seconds (TIMEOUT by default): call it off the event loop."""
    timeout = TIMEOUT if timeout is None else timeout
    command = find_tool()
    if command is None:
        return ToolCopy(None)
    name = os.path.basename(command[0])
    # xclip, xsel and wl-copy stay behind to serve the clipboard, holding what they
    # inherited: a pipe for their output would not close until they go, so none is given.
    with tempfile.TemporaryFile() as errors:
        try:
            done = subprocess.run(
                command,
                input=text.encode("utf-8", errors="replace"),
                stdout=subprocess.DEVNULL,
                stderr=errors,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ToolCopy(name, f"{name} did not finish within {timeout:g} s")
        except OSError as exc:
            return ToolCopy(name, f"{name} could not start ({exc.strerror or exc})")
        if done.returncode:
            errors.seek(0)
            said = " ".join(clean_text(errors.read(500).decode("utf-8", "replace")).split())
            return ToolCopy(
                name,
                f"{name} failed (exit status {done.returncode}{': ' + said if said else ''})",
            )
    return ToolCopy(name)


def copy_notice(size: int, copy: ToolCopy) -> str:
    """One sentence saying how `size` characters were copied."""
    if copy.copied:
        return f"Copied {size:,} characters with {copy.tool}."
    sent = f"{size:,} characters to the terminal's clipboard (OSC 52)"
    fallback = (
        "if your terminal ignores OSC 52, nothing was copied: /export saves this session to a file"
    )
    if copy.problem is None:
        return f"Sent {sent}; {fallback}."
    return f"{copy.problem}, so Kept sent {sent} instead; {fallback}."
