"""/log: each session's consolidation as a chain, pending sessions, figures per model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Label, Static

from app.messages import RetryRequested

if TYPE_CHECKING:
    from app.main import KeptApp

SHOWN = 50  # consolidations and pending parts listed: the newest chains, the oldest parts


class LogScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("r", "retry", "Retry now")]

    app: KeptApp

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="log-scroll"):
            yield Label("Consolidation chain", classes="section")
            yield Static("Asking local servers whether they answer…", id="plan", markup=False)
            yield Label("Consolidations", classes="section")
            yield Static("", id="chains", markup=False)
            yield Label("Pending", classes="section")
            yield Static("", id="pending", markup=False)
            yield Button("Retry now", id="retry", variant="primary")
            yield Label("By model", classes="section")
            yield DataTable(id="figures", cursor_type="row", zebra_stripes=True)
            yield Label("Models now", classes="section")
            yield Static("", id="health", markup=False)
            hidden = (
                Label("Sync", classes="section", id="sync-label"),
                Static(id="sync", markup=False),
            )
            for widget in hidden:  # shown once the data folder is found to sync
                widget.display = False
                yield widget
        yield Footer()

    def on_mount(self) -> None:
        self._show_plan()
        self.refresh_log()
        self._show_sync()
        self.watch(self.app, "memory_status", self._memory_changed, init=False)

    def _memory_changed(self) -> None:
        self.refresh_log()

    @work(thread=True, exclusive=True, group="log-read", exit_on_error=False)
    def refresh_log(self) -> None:
        """Read the logs, journals and health book in a thread (they grow with every
        session), then draw them on the screen's loop."""
        from app.words.consolidation import last_failure
        from app.words.evidence import dropped
        from app.words.models import health_line
        from memory.consolidation.log import figures, model_health, sessions
        from memory.consolidation.run import retry_note
        from memory.sessions.pending import pending as pending_sessions

        store = self.app.store
        lines = []
        for log in reversed(sessions(store, last=SHOWN)):
            lines.append(f"{log.session} [{log.segment}] {'✓' if log.saved else '…'} {log.chain()}")
            # The edits Kept dropped from the reply it kept, each with why (shown without
            # markup: the #chains Static reads none).
            lines += [dropped(reason) for reason in log.dropped]
        chains = "\n".join(lines)
        parts = [(s, part.segment) for s in pending_sessions(store) for part in s.parts]
        pending = []
        # The oldest first, as they are saved; a screen of them, not 10,000 lines to lay out.
        for session, segment in parts[:SHOWN]:
            failures = session.failures.get(segment, [])
            last = f" — {last_failure(failures[-1].reason, failures[-1].cause)}" if failures else ""
            note = retry_note(session.marks, segment)
            pending.append(f"{session.id} [{segment}]: {note}{last}")
        if len(parts) > SHOWN:
            pending.append(f"… and {len(parts) - SHOWN:,} more (`kept log` lists them all)")
        rows = [
            (
                row.model,
                str(row.attempts),
                f"{row.success_rate:.0%}",
                f"{row.median_latency:.2f} s",
                f"${row.cost:.4f}",
            )
            for row in figures(store)
        ]
        health = "\n".join(f"{state.model}: {health_line(state)}" for state in model_health(store))
        self.app.call_from_thread(self._draw, chains, pending, rows, health)

    @work(thread=True, exclusive=True, group="log-sync", exit_on_error=False)
    def _show_sync(self) -> None:
        """This machine's last sync and each device's; shown only for a folder that syncs."""
        from app.words.sync import sync_lines
        from memory.sync.status import sync_status

        lines = sync_lines(sync_status(self.app.store))
        self.app.call_from_thread(self._draw_sync, lines)

    def _draw_sync(self, lines: list[str]) -> None:
        for widget in (self.query_one("#sync-label"), self.query_one("#sync")):
            widget.display = bool(lines)
        self.query_one("#sync", Static).update("\n".join(lines))

    def _draw(
        self, chains: str, pending: list[str], rows: list[tuple[str, ...]], health: str
    ) -> None:
        self.query_one("#chains", Static).update(chains or "No consolidation has run yet.")
        self.query_one("#pending", Static).update("\n".join(pending) or "Nothing pending.")
        self.query_one("#retry", Button).display = bool(pending)
        table = self.query_one("#figures", DataTable)
        table.clear(columns=True)
        table.add_columns("model", "attempts", "success", "median latency", "total cost")
        for row in rows:
            table.add_row(*row)
        self.query_one("#health", Static).update(health or "No model has been asked yet.")

    @work(thread=True, exclusive=True, group="log-plan", exit_on_error=False)
    def _show_plan(self) -> None:
        """The effective chain; local servers are asked, so not on the screen's loop."""
        from dataclasses import replace

        from app.settings import consolidation_plan_of
        from app.words.models import chain_fix

        settings = replace(
            self.app.settings, app=replace(self.app.settings.app, model=self.app.model)
        )
        plan, problem = consolidation_plan_of(self.app.catalog, settings, check=True)
        lines = plan.lines() if plan else [problem]
        if plan is not None and not plan.can_answer:
            lines.append(chain_fix(plan.blocked))
        self.app.call_from_thread(self.query_one("#plan", Static).update, "\n".join(lines))

    @on(Button.Pressed, "#retry")
    def action_retry(self) -> None:
        self.post_message(RetryRequested())
