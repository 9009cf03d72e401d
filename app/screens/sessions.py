"""/sessions: every session, newest first; type to filter; open one read-only, continue it,
export it, or delete its transcript."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Button, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from app.messages import ContinueRequested, MemoryChanged
from app.screens.dialog import Dialog
from catalog.models import short_label

if TYPE_CHECKING:
    from app.main import KeptApp
    from memory.sessions.browse import SessionSummary

PAGE = 200  # rows drawn at a time: more follow as the highlight nears the end
# Seconds of no typing before the transcripts are searched for the filter's words: one
# search when typing pauses, not one per key.
SAID_AFTER = 0.25
FILTER_HERE = 1_000  # rows a filter matches on the loop; more are matched in a thread
TITLE_SHOWN = 60  # characters of a title the delete dialog quotes
STATE_STYLES = {"live": "bold green", "active": "green", "pending": "yellow", "saved": "dim"}


class DeleteDialog(Dialog[str]):
    """Dismisses with "delete", "forget" or "" (cancel)."""

    BINDINGS = [Binding("escape", "dismiss('')", "Cancel")]

    def __init__(self, summary: SessionSummary) -> None:
        super().__init__()
        self.summary = summary

    def compose(self) -> ComposeResult:
        s = self.summary
        if s.state == "saved":
            stays = (
                "Its history entry stays, and so does what MEMORY.md learned from it. "
                '"Forget it too" removes the history entry as well; MEMORY.md is '
                "kept as a version first and is not changed."
            )
        else:
            stays = "It has not been saved to memory yet: nothing of it will stay."
        with Vertical(classes="dialog"):
            # Wrapped, never cropped: a long title keeps its closing quote and the date.
            yield Static(
                f"Delete the transcript of “{_short(s.title, TITLE_SHOWN)}” ({s.started})?",
                classes="dialog-title",
                markup=False,
            )
            yield Static(stays, id="what-stays", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Delete the transcript", id="delete-button", variant="error")
                if s.state == "saved":
                    yield Button("Forget it too", id="forget-button", variant="error")
                yield Button("Cancel", id="cancel-button", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#cancel-button").focus()

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        choice = str(event.button.id).removesuffix("-button")
        self.dismiss("" if choice == "cancel" else choice)


class SessionsScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("down,enter", "to_list", show=False, priority=True),
        Binding("c", "continue_session", "Continue"),
        Binding("e", "export", "Export"),
        Binding("d", "delete", "Delete"),
    ]

    app: KeptApp

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[SessionSummary] = []
        self.shown: list[SessionSummary] = []
        # The filter's words and, for each, the sessions that said it (from the transcripts).
        self.said: tuple[str, dict[str, set[str]]] | None = None
        self._said_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="Type to filter (date, title, model, state, words said); ↓ to the list",
            id="filter",
        )
        yield Static("Loading sessions…", id="sessions-summary", markup=False)
        yield OptionList(id="sessions", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter", Input).focus()
        self.load()

    @work(thread=True, exclusive=True, group="sessions", exit_on_error=False)
    def load(self) -> None:
        """Read in a thread: the screen is up at once, whatever the number of sessions."""
        from memory.sessions.browse import read_sessions

        try:
            self.app.session.find()  # the live session is listed, even at start-up
            sessions, save = read_sessions(self.app.store)
        except Exception as exc:  # whatever it is, the list ends loading and says why
            self.app.call_from_thread(self.failed, exc)
            return
        self.app.call_from_thread(self.show, sessions)
        save()  # the list's cache, once the rows are on screen

    def failed(self, exc: Exception) -> None:
        why = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).rstrip(".")
        self.query_one("#sessions-summary", Static).update(
            f"The sessions could not be listed ({why}); nothing was changed."
        )
        self.app.notify(
            f"The sessions could not be listed ({why}); nothing was changed.",
            title="Sessions",
            severity="error",
            markup=False,
        )

    def show(self, sessions: list[SessionSummary]) -> None:
        live = self.app.session.id
        self.sessions = [s if s.id != live else _as_live(s) for s in sessions]
        self.refilter()

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        """Rows match at once; sessions that said the words join when typing pauses."""
        self.refilter()
        if self._said_timer is not None:
            self._said_timer.stop()
        words = event.value
        if words.strip() and (self.said is None or self.said[0] != words):
            self._said_timer = self.set_timer(SAID_AFTER, lambda: self.search_said(words))

    @work(thread=True, exclusive=True, group="said", exit_on_error=False)
    def search_said(self, words: str) -> None:
        from memory.sessions.browse import said_in

        said = said_in(self.app.store, words)
        self.app.call_from_thread(self._found_said, words, said)

    def _found_said(self, words: str, said: dict[str, set[str]]) -> None:
        self.said = (words, said)
        if self.query_one("#filter", Input).value == words:
            self.refilter(keep=True)

    def refilter(self, *, keep: bool = False) -> None:
        """The rows the filter matches, the first highlighted (with `keep`, the one that was:
        results that arrive later must not move the user's place)."""
        words = self.query_one("#filter", Input).value
        said = self.said[1] if self.said is not None and self.said[0] == words else None
        if not words.strip():
            self._draw(words, self.sessions, keep)
        elif len(self.sessions) <= FILTER_HERE:
            self._draw(words, [s for s in self.sessions if s.matches(words, said)], keep)
        else:  # many rows: matched in a thread, so that typing never waits for them
            self._filter(words, said, keep)

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def _filter(self, words: str, said: dict[str, set[str]] | None, keep: bool) -> None:
        shown = [s for s in self.sessions if s.matches(words, said)]
        self.app.call_from_thread(self._filtered, words, shown, keep)

    def _filtered(self, words: str, shown: list[SessionSummary], keep: bool) -> None:
        if self.query_one("#filter", Input).value == words:  # else a later filter draws
            self._draw(words, shown, keep)

    def _draw(self, words: str, shown: list[SessionSummary], keep: bool) -> None:
        options = self.query_one("#sessions", OptionList)
        current = self._current() if keep else None
        self.shown = shown
        options.clear_options()
        options.add_options([Option(_row(s), id=s.id) for s in self.shown[:PAGE]])
        if self.shown:
            kept = [i for i, s in enumerate(self.shown[:PAGE]) if current and s.id == current.id]
            options.highlighted = kept[0] if kept else 0
        total = len(self.sessions)
        self.query_one("#sessions-summary", Static).update(
            f"{len(self.shown):,} of {total:,} sessions"
            if words.strip()
            else f"{total:,} sessions, newest first · Enter: open · c: continue · "
            "e: export · d: delete"
        )

    @on(OptionList.OptionHighlighted, "#sessions")
    def more(self, event: OptionList.OptionHighlighted) -> None:
        """Draw the next rows before the highlight reaches the last one drawn."""
        options = self.query_one("#sessions", OptionList)
        drawn = options.option_count
        if event.option_index >= drawn - 20 and drawn < len(self.shown):
            options.add_options(
                [Option(_row(s), id=s.id) for s in self.shown[drawn : drawn + PAGE]]
            )

    def action_to_list(self) -> None:
        """Down or Enter in the filter moves to the list. A priority binding, and set_focus
        rather than the deferred focus(), because keys read in one batch (the `c` typed right
        after Down) are queued on the focused widget before it handles the first of them."""
        if self.focused is not self.query_one("#filter", Input):
            raise SkipAction
        self.set_focus(self.query_one("#sessions", OptionList))

    def _current(self) -> SessionSummary | None:
        options = self.query_one("#sessions", OptionList)
        if options.highlighted is None or not self.shown:
            return None
        return self.shown[options.highlighted]

    @on(OptionList.OptionSelected, "#sessions")
    def open_session(self, event: OptionList.OptionSelected) -> None:
        from app.screens.transcript import TranscriptScreen

        summary = self.shown[event.option_index]
        try:
            journal = self.app.store.find_session(summary.id)
        except LookupError:
            self.app.notify(
                f"Session {summary.id} is no longer on disk.", severity="warning", markup=False
            )
            return
        title = (
            f"{summary.title}\n{summary.started} · {summary.model or 'no reply'} · "
            f"{summary.messages} messages · {summary.state} · session {summary.id}"
        )
        self.app.push_screen(TranscriptScreen(title, journal.messages, []))

    def action_continue_session(self) -> None:
        summary = self._current()
        if summary is None:
            return
        self.post_message(ContinueRequested(self, summary.id))  # closed once it is live

    def action_export(self) -> None:
        summary = self._current()
        if summary is not None:
            self.export(summary)

    @work(thread=True, group="sessions-export", exit_on_error=False)
    def export(self, summary: SessionSummary) -> None:
        """In a thread: the session's attachments are copied beside its Markdown."""
        from app.export import export_session

        try:
            journal = self.app.store.find_session(summary.id)
            path = export_session(journal, self.app.catalog, None, self.app.store.root / "exports")
        except (OSError, LookupError) as exc:
            self.app.call_from_thread(
                self.app.notify,
                f"Could not export: {getattr(exc, 'strerror', None) or exc}",
                severity="error",
                markup=False,
            )
            return
        self.app.call_from_thread(
            self.app.notify, f"Session exported to {path}", title="Export", markup=False
        )

    def action_delete(self) -> None:
        summary = self._current()
        if summary is None:
            return
        if summary.id == self.app.session.id:
            self.app.notify(
                "This is the session you are in: start a new one (/new) before deleting it.",
                severity="warning",
                markup=False,
            )
            return

        def chosen(choice: str | None) -> None:
            if choice:
                self.delete(summary, forget=choice == "forget")

        self.app.push_screen(DeleteDialog(summary), chosen)

    @work(thread=True, group="sessions-delete", exit_on_error=False)
    def delete(self, summary: SessionSummary, *, forget: bool) -> None:
        """In a thread: the files it attached are looked for in every journal."""
        from memory.sessions.delete import delete_session

        try:
            delete_session(self.app.store, summary.id, forget=forget)
        except (OSError, ValueError, LookupError) as exc:
            self.app.call_from_thread(self.app.notify, str(exc), severity="error", markup=False)
            return
        said = "and its history entry are" if forget else "is"
        self.app.call_from_thread(
            self.app.notify,
            f"The transcript of “{summary.title}” {said} deleted.",
            title="Sessions",
            markup=False,
        )
        self.app.call_from_thread(self.load)
        self.post_message(MemoryChanged())  # a pending session deleted is pending no more


def _as_live(summary: SessionSummary) -> SessionSummary:
    from dataclasses import replace

    return replace(summary, state="live")


def _short(title: str, limit: int) -> str:
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


def _row(s: SessionSummary) -> Text:
    row = Text(no_wrap=True, overflow="ellipsis")
    row.append(f"{s.started or '?':16}  ", style="green")
    title = _short(s.title, 40)
    row.append(f"{title:40}  ")
    models = ", ".join(short_label(m) for m in s.model.split(", ")) if s.model else "—"
    row.append(f"{_short(models, 16):16} ", style="magenta")  # —: no model answered
    row.append(f"{s.messages:>5} msg  ", style="dim")
    row.append(s.state, style=STATE_STYLES.get(s.state, ""))
    return row
