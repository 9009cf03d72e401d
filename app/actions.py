"""What /remember, /export and /copy do: the slow part of each (a locked write, files
copied, the system's clipboard tool) runs in a thread, and a notice says how it went."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.main import KeptApp


def remember(app: KeptApp, text: str) -> None:
    app.run_worker(partial(_remember, app, text), thread=True, group="remember")


def _remember(app: KeptApp, text: str) -> None:
    """In a thread: the write is locked and fsynced, and may wait for a consolidation."""
    try:
        number = app.store.remember(text)
    except (OSError, ValueError) as exc:
        from app.words.memory import not_written

        app.call_from_thread(
            app.notify, not_written(exc), title="Not remembered", severity="warning", markup=False
        )
        return
    app.call_from_thread(
        app.notify, f"Remembered (MEMORY.md version {number}).", title="Memory", markup=False
    )


def export(app: KeptApp, argument: str) -> None:
    app.run_worker(partial(_export, app, argument), thread=True, group="export")


def _export(app: KeptApp, argument: str) -> None:
    """In a thread: a session's attachments are copied beside its Markdown."""
    from app.export import export_session

    folder = app.store.root / "exports"
    try:
        path = export_session(app.session, app.catalog, argument or None, folder)
    except OSError as exc:
        app.call_from_thread(
            app.notify,
            f"Could not export to {argument or folder}: {exc.strerror or exc}.",
            severity="error",
            markup=False,
        )
        return
    app.call_from_thread(_exported, app, path)


def _exported(app: KeptApp, path: Path) -> None:
    if app.session.private:
        app.notify(
            f"This private session is exported to {path}, outside Kept's private "
            "clean-up: that file stays until you delete it.",
            title="Export",
            severity="warning",
            markup=False,
        )
        return
    app.notify(f"Session exported to {path}", title="Export", markup=False)


def copy(app: KeptApp, argument: str) -> None:
    """/copy: the last reply; /copy code: the last code block in it."""
    from app.export import last_code_block

    replies = [
        content
        for m in app.session.messages
        if m.get("role") == "assistant" and (content := m.get("content"))
    ]
    if not replies:
        app.notify("There is no reply to copy yet.", severity="warning", markup=False)
        return
    text = replies[-1]
    if argument.strip().lower() == "code":
        code = last_code_block(text)
        if code is None:
            app.notify("The last reply has no code block.", severity="warning", markup=False)
            return
        text = code
    # OSC 52 to the terminal, and Textual's own clipboard (what a paste in Kept reads);
    # then the system's clipboard tool, off the loop: it may wait for its display.
    app.copy_to_clipboard(text)
    app.run_worker(
        partial(_copy_with_tool, app, text), thread=True, group="copy", exit_on_error=False
    )


def _copy_with_tool(app: KeptApp, text: str) -> None:
    """Say how `text` was copied: with the system's tool, or only through the terminal."""
    from app.clipboard import copy_notice, copy_with_tool

    copy = copy_with_tool(text)
    app.call_from_thread(
        app.notify,
        copy_notice(len(text), copy),
        title="Copy",
        severity="warning" if copy.problem else "information",
        markup=False,
    )
