"""The Kept app: a thin Textual App that wires screens to the catalog and memory."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker

from app import actions, startup
from app.background import MemoryJobs, MemoryStatus
from app.commands import SLASH_COMMANDS
from app.messages import (
    ContinueRequested,
    MemoryChanged,
    ModelChosen,
    NewSessionRequested,
    RetryRequested,
    TurnEnded,
)
from app.reply import Replies
from app.review import MemoryReview
from app.settings import Settings, load_settings, save_setting
from catalog import Catalog, KeyStore, UnknownModelError, load_catalog
from memory import LiveSession, MemoryStore
from themes import KEPT_THEMES, STYLES

if TYPE_CHECKING:
    from catalog import RetryPolicy


class KeptApp(App[None]):
    """Chat with the model you choose; memory is saved in the background."""

    TITLE = "Kept"
    CSS_PATH = STYLES
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+n", "new_session", "New session"),
        Binding("ctrl+o", "pick_model", "Model"),
        Binding("f2", "sessions", "Sessions", show=False),
        Binding("f1", "help", "Help"),
        Binding("ctrl+r", "review_memory", "Review memory change", show=False),
    ]

    # The state the screens show, each held once here; screens watch it, nothing refreshes
    # them by hand.
    model: var[str] = var("")
    session: var[LiveSession] = var(cast(LiveSession, None))  # set before anything runs
    memory_status: var[MemoryStatus] = var(MemoryStatus)

    def __init__(
        self,
        *,
        store: MemoryStore | None = None,
        catalog: Catalog | None = None,
        settings: Settings | None = None,
        policy: RetryPolicy | None = None,
        config_path: Path | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__()
        # The time the model is told; tests pin it so that screenshots repeat exactly.
        self.clock = clock or (lambda: datetime.now().astimezone())
        self.config_path = config_path
        self.settings = settings or load_settings(config_path)
        # Keys are read in a thread after the first frame (`_check_keys`).
        self.catalog = catalog or load_catalog(self.settings.catalog, KeyStore(defer=True))
        self.store = store or MemoryStore(settings=self.settings.memory)
        self.policy = policy
        # Both read config.toml: a TOML error in it is one notice, not two.
        self.problems = list(dict.fromkeys([*self.catalog.problems, *self.settings.problems]))
        model = self.settings.app.model
        if model not in self.catalog:
            from app.words.models import app_model_problem

            self.problems.append(app_model_problem(model))
            model = self._answerable_default()
        self.set_reactive(KeptApp.model, model)
        startup.first_theme(self, KEPT_THEMES)
        # Every notice shown this run, in order: what a notice said stays readable after
        # its toast has gone.
        self.notices: list[str] = []
        # Found after the first frame, in a thread (`_find_session`): start-up reads no
        # journal and makes no file. A message sent sooner waits for it.
        session = LiveSession.to_find(self.store, model)
        session.on_found = partial(startup.session_found, self)
        self.set_reactive(KeptApp.session, session)
        self.jobs = MemoryJobs(self)
        # The reply being written is the app's: /new and Ctrl+N stop it from any screen.
        self.replies = Replies(self)
        self.review = MemoryReview(self)
        self.ready_at: float | None = None

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a notice (a toast), and keep its text in `notices`."""
        self.notices.append(str(message))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.jobs.on_worker_state_changed(event)
        self.replies.on_worker_state_changed(event)

    def _answerable_default(self) -> str:
        """The default model if it can answer, else the first visible one that can (a
        configured local model, say): never a fallback to a model with no key."""
        default = type(self.settings.app)().model
        for entry in (self.catalog.get(default), *self.catalog.visible()):
            if self.catalog.route(entry).key.usable:
                return entry.id
        return default

    def on_mount(self) -> None:
        startup.catch_signals(self, install=True)
        self.call_after_refresh(self._first_frame)

    def get_default_screen(self) -> Screen[None]:
        from app.screens.chat import ChatScreen

        return ChatScreen()

    # Start-up's steps (app/startup.py), methods so that a test or a benchmark can hook one.

    def _first_frame(self) -> None:
        startup.first_frame(self)

    def _warm_up(self) -> None:
        startup.warm_up(self)

    def _find_session(self) -> None:
        startup.find_session(self)

    def _check_keys(self) -> None:
        startup.check_keys(self)

    # --- settings that persist ---------------------------------------------------------------

    def _save(self, table: str, key: str, value: str) -> None:
        try:
            save_setting(table, key, value, self.config_path)
        except (OSError, ValueError) as exc:
            self.notify(str(exc), title="Settings not saved", severity="error", markup=False)

    def watch_theme(self, theme: str) -> None:
        # Only a theme the user picks is saved: an unknown one in config.toml stays there,
        # named in a notice, for the user to fix.
        if theme != self.settings.app.theme:
            self._save("app", "theme", theme)
            self.settings = replace(self.settings, app=replace(self.settings.app, theme=theme))

    def set_model(self, model_id: str) -> None:
        try:
            self.catalog.get(model_id)
        except UnknownModelError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.model = model_id  # the screens that show it follow
        self._save("app", "model", model_id)
        route = self.catalog.route(self.catalog.get(model_id))
        if not route.key.usable:
            self.notify(
                f"No key for {route.gateway.label}: {route.entry.label} cannot answer "
                "until you add one with /keys; its fallbacks answer meanwhile.",
                title="Model",
                severity="warning",
                markup=False,
            )

    async def use_local_model(self, base_url: str, model: str, window: int | None) -> str:
        """Chat with `model` on a local server if a test message gets an answer; "" when
        it did and the choice is saved, else the sentence that says why not."""
        import asyncio

        from app.settings import add_local_model
        from catalog.probe import try_local_model

        problem = await try_local_model(self.catalog, base_url, model, window, self.policy)
        if problem:
            return problem
        try:
            await asyncio.to_thread(add_local_model, model, base_url, self.config_path, window)
        except (OSError, ValueError) as exc:
            return str(exc)
        settings = await asyncio.to_thread(load_settings, self.config_path)  # off the loop
        self.catalog = load_catalog(settings.catalog, self.catalog.keys)
        self.set_model(model)
        return ""

    # --- commands ----------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in SLASH_COMMANDS:
            yield SystemCommand(
                command.title,
                f"{command.name} — {command.help}",
                partial(
                    self.run_action,
                    f"{command.action}('')" if command.takes_argument else command.action,
                ),
            )
        yield SystemCommand(
            "Save pending memory now",
            "Try again now to save the sessions whose memory is not saved yet",
            self.jobs.retry_now,
        )
        yield SystemCommand(
            "Review memory change",
            "See the last change to MEMORY.md (and undo it), or decide on a proposed one (Ctrl+R)",
            self.action_review_memory,
        )

    # --- what the screens ask (app/messages.py) -----------------------------------------------

    async def on_new_session_requested(self, request: NewSessionRequested) -> None:
        """Stop the reply being written (it journals what it showed), then start afresh."""
        await self.replies.stop()
        self.new_session(private=request.private)  # the new session is drawn when it is live

    def on_continue_requested(self, request: ContinueRequested) -> None:
        problem = self.continue_session(request.session_id)
        if problem:
            self.notify(problem, title="Sessions", severity="warning", markup=False)
        elif request.screen is self.screen:
            self.pop_screen()  # the screen that asked, back to the chat

    def on_retry_requested(self, _: RetryRequested) -> None:
        self.jobs.retry_now()
        self.notify("Retrying pending sessions now.", title="Memory", markup=False)

    def on_model_chosen(self, choice: ModelChosen) -> None:
        self.set_model(choice.model_id)

    def on_memory_changed(self, _: MemoryChanged) -> None:
        self.jobs.refresh_status()

    def on_turn_ended(self, _: TurnEnded) -> None:
        """Memory decides whether the session has outgrown its window; what it hands back
        is saved in the background."""
        segment = self.session.after_turn()
        if segment is not None:
            self.jobs.save(self.session.journal, segment)

    def new_session(self, *, private: bool = False) -> None:
        """Close this session (it is saved in the background, or deleted if private) and
        start a fresh one, off the record if `private`."""
        old = self.session
        segment = old.close()
        self.session = LiveSession.start(self.store, self.model, private=private)
        if segment is not None:
            self.jobs.save(old.journal, segment)

    def continue_session(self, session_id: str) -> str:
        """Make a past session the live one (this one is closed as by /new); "" when done,
        else the sentence that says why not."""
        if session_id == self.session.id:
            return ""
        if self.replies.replying:
            return "Kept is still answering: wait for the reply, or press Esc to cancel it."
        try:
            live = LiveSession.reopen(self.store, session_id)
        except (LookupError, OSError, ValueError) as exc:
            return f"Session {session_id} cannot be continued: {exc}"
        if live is None:
            return f"Session {session_id} is open in another Kept window."
        old = self.session
        segment = old.close()
        self.session = live
        if segment is not None:
            self.jobs.save(old.journal, segment)
        return ""

    def on_unmount(self) -> None:
        startup.catch_signals(self, install=False)
        if self.session.private:  # a private session ends with the app
            self.session.close()
        else:
            self.session.release()  # the next start resumes it

    def action_new_session(self) -> None:
        self.post_message(NewSessionRequested())

    def action_private_session(self) -> None:
        self.post_message(NewSessionRequested(private=True))

    def action_change_theme(self, name: str = "") -> None:
        """/theme NAME switches at once; /theme alone opens the picker."""
        if not name:
            super().action_change_theme()
        elif name in self.available_themes:
            self.theme = name
            self.notify(f"Theme: {name}.", title="Theme", markup=False)
        else:
            self.notify(
                f"There is no theme '{name}'; known: {', '.join(sorted(self.available_themes))}.",
                title="Theme",
                severity="error",
                markup=False,
            )

    def action_pick_model(self, model_id: str = "") -> None:
        from app.screens.model_picker import ModelPicker

        if model_id:  # /model ID: that model at once
            if model_id in self.catalog:
                self.set_model(model_id)
                self.notify(
                    f"Chatting with {self.catalog.get(model_id).label}.",
                    title="Model",
                    markup=False,
                )
            else:
                self.set_model(model_id)  # says it is unknown, with the nearest ids
            return

        def chosen(model_id: str | None) -> None:
            if model_id:
                self.set_model(model_id)

        self.push_screen(ModelPicker(self.catalog, self.model), chosen)

    def action_keys(self) -> None:
        from app.screens.keys import KeysScreen

        self.push_screen(KeysScreen())

    def action_sessions(self) -> None:
        from app.screens.sessions import SessionsScreen

        self.push_screen(SessionsScreen())

    def action_memory(self) -> None:
        from app.screens.memory import MemoryScreen

        self.push_screen(MemoryScreen())

    def action_remember(self, text: str = "") -> None:
        actions.remember(self, text)

    def action_grep(self, pattern: str = "") -> None:
        from app.screens.search import SearchScreen

        self.push_screen(SearchScreen(pattern))

    def action_log(self) -> None:
        from app.screens.log import LogScreen

        self.push_screen(LogScreen())

    def action_review_memory(self) -> None:
        self.run_worker(self.review.open(), group="review", exclusive=True, exit_on_error=False)

    def action_tidy(self) -> None:
        self.run_worker(self.review.tidy(), group="review", exclusive=True, exit_on_error=False)

    def action_help(self) -> None:
        from app.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_export(self, argument: str = "") -> None:
        actions.export(self, argument)

    def action_copy(self, argument: str = "") -> None:
        actions.copy(self, argument)


def run(app: KeptApp | None = None, *, headless: bool = False) -> int:
    """Start the app (the `kept` command with no arguments); non-zero when it crashed."""
    if app is None:
        try:
            app = KeptApp()
            startup.refuse_read_only(app.store)
        except OSError as exc:  # e.g. a data folder the user made read-only
            import sys

            from app.errors import os_error

            print(f"kept: {os_error(exc)}", file=sys.stderr)
            return 2
    app.run(headless=headless)
    return app.return_code or 0
