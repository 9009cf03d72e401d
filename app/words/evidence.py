"""The user's words a memory change stands on, in the words Ctrl+R, /memory's Where from,
/log and the shell's `kept memory review` and `kept log` share: each line a change added,
replaced or forgot with the quotes it stands on and when they were said, the lines Kept
could not check by itself, and the edits it did not keep, with why.

The records are memory.consolidation.decisions' (`Decision.to_json`, cleaned when read:
memory.data.versions.decisions). Quotes are the user's text: everything here is plain text,
which the TUI shows without markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

# What a line of the account is, for the TUI to style it (the shell prints the text only).
Part = Literal["title", "line", "quote", "note"]

HEADING = "Your words behind these lines:"
NOT_KEPT = "Not kept:"
SHOWN_FATES = ("applied", "held")


def said_when(time: str) -> str:
    """When a message was said, as the sessions list and HISTORY.md date it (local time to
    the minute); "" when the record's time is not one."""
    from memory.sessions.browse import local_stamp

    return local_stamp(time) if time else ""


def quoted(quote: Mapping[str, Any]) -> str:
    """`“I moved to Lyon last month” — you, 2026-12-04 10:12`."""
    stamp = said_when(str(quote.get("time") or ""))
    return f"“{quote.get('quote') or ''}” — you" + (f", {stamp}" if stamp else "")


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def edit_named(decision: Mapping[str, Any]) -> str:
    """An edit as the consolidation log names it: "add 'Works in Vienna'"."""
    op = str(decision.get("op") or "edit")
    target = decision.get("line") if op == "add" else decision.get("old") or decision.get("line")
    return f"{op} '{_short(str(target or ''))}'"


def _quotes(decision: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = decision.get("evidence")
    return [q for q in found if isinstance(q, Mapping)] if isinstance(found, list) else []


def _changed(decision: Mapping[str, Any], present: set[str]) -> str | None:
    """The line a kept edit wrote (or took out), as shown; None when the text it is shown
    beside no longer says so (a line you edited away before accepting)."""
    from memory.consolidation.edits import normal

    op, line, old = decision.get("op"), str(decision.get("line") or ""), decision.get("old")
    if op == "forget":
        old = str(old or "")
        return f"− {old} (forgotten)" if old and normal(old) not in present else None
    if not line or normal(line) not in present:
        return None
    return (
        f"+ {line} (in place of '{_short(str(old))}')" if op == "replace" and old else f"+ {line}"
    )


def why_parts(
    decisions: Sequence[Mapping[str, Any]], text: str, *, waiting: bool
) -> list[tuple[Part, str]]:
    """Each line the change added, replaced or forgot (as `text`, the MEMORY.md it wrote,
    still says) with the quotes it stands on; a held line's reason; then the edits Kept
    did not keep. [] when the change kept no such record (older versions)."""
    from memory.consolidation.edits import normal

    present = {normal(line) for line in text.splitlines()}
    parts: list[tuple[Part, str]] = []
    for decision in decisions:
        if decision.get("fate") not in SHOWN_FATES:
            continue
        shown = _changed(decision, present)
        if shown is None:
            continue
        parts.append(("line", shown))
        parts += [("quote", f"  {quoted(q)}") for q in _quotes(decision)]
        if decision.get("fate") == "held":
            parts.append(("note", "  " + held(str(decision.get("why") or ""), waiting=waiting)))
    refused = [d for d in decisions if d.get("fate") == "refused"]
    if parts:
        parts.insert(0, ("title", HEADING))
    if refused:
        parts.append(("title", NOT_KEPT))
        parts += [("note", f"  {refusal(d)}") for d in refused]
    return parts


def held(why: str, *, waiting: bool) -> str:
    """Why a line waits (or waited) for the user: "Kept could not check this by itself:
    …; it waits for your review"."""
    said = "Kept could not check this by itself" + (f": {why.rstrip('.')}" if why else "")
    return f"{said}; it waits for your review." if waiting else f"{said}; you accepted it."


def refusal(decision: Mapping[str, Any]) -> str:
    """An edit Kept did not keep, and why: "add 'Works in Vienna': 'vienna' was never said"."""
    why = str(decision.get("why") or "").rstrip(".")
    return f"{edit_named(decision)}: {why}" if why else edit_named(decision)


def why_text(decisions: Sequence[Mapping[str, Any]], text: str, *, waiting: bool) -> str:
    """`why_parts` as plain lines, for the shell."""
    return "\n".join(line for _, line in why_parts(decisions, text, waiting=waiting))


def stood_on(quotes: Iterable[Mapping[str, Any]]) -> str:
    """The quotes a line of MEMORY.md stood on when it was written, for Where from; ""
    when there are none (a version older than the records)."""
    lines = [f"  {quoted(q)}" for q in quotes]
    return "It stands on your words:\n" + "\n".join(lines) if lines else ""


def dropped(reason: str) -> str:
    """An edit Kept dropped from a reply it kept, under its session's chain in the log."""
    return f"  dropped: {reason}"
