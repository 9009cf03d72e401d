"""Slash commands: one table, used by the composer, the command palette and /help."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str  # "/new"
    title: str  # shown in the command palette
    help: str
    action: str  # an App action (or "screen.…", the chat's), run with the argument
    takes_argument: bool = False


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "/new",
        "New session",
        "Start a new session; the finished one is saved to memory in the background",
        "new_session",
    ),
    SlashCommand(
        "/private",
        "Private session",
        "Start a session that is never saved to memory; its journal is deleted when it ends",
        "private_session",
    ),
    SlashCommand(
        "/sessions",
        "Sessions",
        "Every session, newest first: open, continue, export or delete one (F2)",
        "sessions",
    ),
    SlashCommand(
        "/model",
        "Choose model",
        "Pick the model you chat with (/model ID: that one)",
        "pick_model",
        takes_argument=True,
    ),
    SlashCommand("/keys", "API keys", "Set, replace, delete or test a gateway's key", "keys"),
    SlashCommand(
        "/theme",
        "Change theme",
        "Pick a colour theme (/theme NAME: that one)",
        "change_theme",
        takes_argument=True,
    ),
    SlashCommand("/memory", "Memory", "See and edit MEMORY.md, history and versions", "memory"),
    SlashCommand(
        "/remember",
        "Remember this",
        "Add a line to MEMORY.md now, no model call (/remember TEXT)",
        "remember",
        takes_argument=True,
    ),
    SlashCommand(
        "/tidy",
        "Tidy memory",
        "Rewrite MEMORY.md tidily (duplicates merged, "
        "contradictions resolved); shown as a diff to accept or reject",
        "tidy",
    ),
    SlashCommand(
        "/grep",
        "Search history",
        "Search history and every session's words, newest first (/grep PATTERN)",
        "grep",
        takes_argument=True,
    ),
    SlashCommand(
        "/log",
        "Consolidation log",
        "How each session was saved; pending ones; figures per model",
        "log",
    ),
    SlashCommand(
        "/export",
        "Export session",
        "Save this session as a Markdown file (optionally /export PATH)",
        "export",
        takes_argument=True,
    ),
    SlashCommand(
        "/attach",
        "Attach a file",
        "Attach files to your next message (/attach PATH…; Tab completes a path)",
        "screen.attach",
        takes_argument=True,
    ),
    SlashCommand(
        "/detach",
        "Remove an attachment",
        "Remove an attachment from your next message (/detach NAME; alone: all of them)",
        "screen.detach",
        takes_argument=True,
    ),
    SlashCommand(
        "/copy",
        "Copy last reply",
        "Copy the last reply (/copy code: its last code block)",
        "copy",
        takes_argument=True,
    ),
    SlashCommand(
        "/tools",
        "Tool servers",
        "Tool servers the chat may use: their tools, state and cost; turn one on or off",
        "screen.tools",
    ),
    SlashCommand("/help", "Help", "Commands and keys", "help"),
    SlashCommand("/quit", "Quit", "Leave Kept (nothing is lost)", "quit"),
)
BY_NAME = {c.name: c for c in SLASH_COMMANDS}


def parse(text: str) -> tuple[SlashCommand | None, str]:
    """The command a line names (None if unknown) and its argument."""
    name, _, argument = text.strip().partition(" ")
    return BY_NAME.get(name.lower()), argument.strip()


def closest(text: str) -> str | None:
    import difflib

    name = text.strip().split(" ")[0]
    near = difflib.get_close_matches(name, list(BY_NAME), n=1, cutoff=0.5)
    return near[0] if near else None
