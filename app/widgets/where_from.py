"""/memory's *Where from* tab: the lines of MEMORY.md, each with the version that wrote it,
and beside them who wrote the highlighted one. Enter opens the session that wrote the
line, and is offered only where a session did."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.documents import async_store
from app.words.evidence import SHOWN_FATES, stood_on
from memory.data.versions import VersionKind

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from app.main import KeptApp
    from memory import MemoryStore
    from memory.recall.provenance import BlameLine


def opens_a_session(line: BlameLine) -> bool:
    """Whether a session wrote `line`, so that Enter has a transcript to open."""
    return line.version is not None and line.version.session is not None


def quotes_of(line: BlameLine) -> list[dict[str, Any]]:
    """The user's words `line` stood on, as the version that wrote it recorded them (the
    decision whose line is this one, compared normalised); [] for a version older than
    the records, or a line no edit of it wrote (a "Previously:" line, a heading)."""
    from memory.consolidation.edits import normal

    version = line.version
    key = normal(line.text)
    if version is None or not key:
        return []
    for decision in version.evidence:
        if (
            decision.get("fate") in SHOWN_FATES
            and decision.get("op") != "forget"
            and normal(str(decision.get("line") or "")) == key
        ):
            found = decision.get("evidence")
            return [q for q in found if isinstance(q, dict)] if isinstance(found, list) else []
    return []


def described(store: MemoryStore, line: BlameLine) -> str:
    """Who wrote `line`, for the pane beside the list, with Enter only where it works
    (it reads the store: the pane calls it off the event loop)."""
    from memory.recall.provenance import explain

    said = stood_on(quotes_of(line))
    if opens_a_session(line):
        return explain(store, line, said=said) + "\n\nEnter: open the session's transcript there."
    head = f"Line {line.number}: {line.text}"
    version = line.version
    if version is None:
        last = store.latest_version()  # one record read, not every version's
        after = f" after version {last.number} ({when(last.time)})" if last else ""
        return (
            f"{head}\n\nYou wrote this line by hand (edited by you){after}; "
            "no version holds it yet."
        )
    if version.kind is VersionKind.EDIT:
        return (
            f"{head}\n\nYou wrote this line by hand; version {version.number} kept it on "
            f"{when(version.time)}."
        )
    if version.kind is VersionKind.REMEMBERED:
        return (
            f"{head}\n\nYou asked Kept to remember this line on {when(version.time)} "
            f"(version {version.number})."
        )
    return (
        explain(store, line, said=said)
        + "\n\nNo session wrote this line: there is no transcript to open."
    )


def when(time: str) -> str:
    """A version's time as the other tabs show it: to the minute."""
    return time[:16].replace("T", " ")


class WhereFrom(OptionList):
    """Each line of MEMORY.md with the version that last wrote it."""

    BINDINGS = [Binding("enter", "select", "Open its session")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[BlameLine] = []

    def show(self, lines: list[BlameLine]) -> None:
        """List `lines`, keeping the highlight where it was."""
        highlighted = self.highlighted
        self.lines = lines
        self.clear_options()
        for line in lines:
            who = f"v{line.version.number}" if line.version else "new"
            self.add_option(
                Option(Text.assemble((f"{who:>5} ", "dim"), line.text or " "), id=str(line.number))
            )
        if lines:
            self.highlighted = min(highlighted or 0, len(lines) - 1)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A line you wrote has no session: Enter is neither shown nor taken for it.
        if action == "select":
            index = self.highlighted
            return (
                index is not None and index < len(self.lines) and opens_a_session(self.lines[index])
            )
        return True


class WhereFromPane(Horizontal):
    """The lines, and who wrote the highlighted one."""

    app: KeptApp

    def compose(self) -> ComposeResult:
        yield WhereFrom(id="blame")
        with VerticalScroll(id="blame-scroll"):
            yield Static("", id="blame-detail", markup=False)

    def show(self, lines: list[BlameLine]) -> None:
        """List `lines`, keeping the highlight where it was."""
        listing = self.query_one(WhereFrom)
        listing.show(lines)
        if not listing.lines:
            self.query_one("#blame-detail", Static).update("MEMORY.md is empty.")

    @on(OptionList.OptionHighlighted, "#blame")
    def explain_line(self, event: OptionList.OptionHighlighted) -> None:
        lines = self.query_one(WhereFrom)
        lines.refresh_bindings()  # Enter is offered on a line a session wrote, only
        self._explain(lines.lines[event.option_index])

    @work(exclusive=True, group="where-from", exit_on_error=False)
    async def _explain(self, line: BlameLine) -> None:
        """Who wrote the highlighted line, read off the loop; a newer highlight cancels it."""
        detail = await asyncio.to_thread(described, self.app.store, line)
        self.query_one("#blame-detail", Static).update(detail)

    @on(OptionList.OptionSelected, "#blame")
    async def open_transcript(self, event: OptionList.OptionSelected) -> None:
        """The session that wrote the line, at the messages it most likely came from."""
        from app.screens.transcript import TranscriptScreen
        from memory.recall.provenance import history_entry_for, likely_messages

        line = self.query_one(WhereFrom).lines[event.option_index]
        session = line.version.session if line.version else None
        if session is None:  # a click, not Enter: the pane says who wrote the line
            return
        store = async_store(self.app)
        try:
            journal = await store.find_session(session)
        except LookupError:
            self.app.notify(
                f"Session {session}'s journal is no longer on disk.",
                title="Where from",
                severity="warning",
                markup=False,
            )
            return
        marked = likely_messages(journal.messages, line.text)
        entry = await asyncio.to_thread(history_entry_for, store.store, session, line.version)
        title = f"Session {session} · {line.version.model if line.version else ''}\n" + (
            entry.text if entry else "(its history entry was not found)"
        )
        if not marked:
            title += (
                "\nNo message shares a telling word with the line "
                f"{line.text!r} (matching is by text, best effort)."
            )
        self.app.push_screen(TranscriptScreen(title, journal.messages, marked))
