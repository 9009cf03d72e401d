"""The Kept app: a thin Textual App that wires screens to the catalog and memory."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import suppress
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

from app.background import MemoryJobs, MemoryStatus
from app.commands import SLASH_COMMANDS
from app.review import MemoryReview
from app.settings import DEFAULT_THEME, Settings, load_settings, save_setting
from catalog import Catalog, KeyStore, UnknownModelError, load_catalog
from memory import LiveSession, MemoryStore
from themes import KEPT_THEMES, STYLES

if TYPE_CHECKING:
    from catalog import RetryPolicy

STARTED = time.perf_counter()


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
            from app.cli.inspect import app_model_problem

            self.problems.append(app_model_problem(model))
            model = self._answerable_default()
        self.set_reactive(KeptApp.model, model)
        for theme in KEPT_THEMES:
            self.register_theme(theme)
        wanted = self.settings.app.theme
        if wanted not in self.available_themes:
            self.problems.append(
                f"config.toml: [app] theme '{wanted}' is unknown; using "
                f"{DEFAULT_THEME}. Pick one with /theme."
            )
            wanted = DEFAULT_THEME
        self._set_first_theme(wanted)
        # Every notice shown this run, in order: what a notice said stays readable after
        # its toast has gone.
        self.notices: list[str] = []
        # Found after the first frame, in a thread (`_find_session`): start-up reads no
        # journal and makes no file. A message sent sooner waits for it.
        session = LiveSession.to_find(self.store, model)
        session.on_found = self._session_found
        self.set_reactive(KeptApp.session, session)
        self.jobs = MemoryJobs(self)
        self.review = MemoryReview(self)
        self.ready_at: float | None = None

    def _set_first_theme(self, name: str) -> None:
        """What setting `theme` does, before anything is parsed: its variables, classes
        and colours. Set as usual, the change would parse and apply every rule a second
        time before the first frame; and the theme read at start-up is not saved."""
        self.set_reactive(App.theme, name)
        dark = self.current_theme.dark
        self.set_class(True, f"-theme-{name}", update=False)
        self.set_class(dark, "-dark-mode", update=False)
        self.set_class(not dark, "-light-mode", update=False)
        self._refresh_truecolor_filter(self.ansi_theme)
        self.stylesheet.set_variables(self.get_css_variables())

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

    def _answerable_default(self) -> str:
        """The default model if it can answer, else the first visible one that can (a
        configured local model, say): never a fallback to a model with no key."""
        default = type(self.settings.app)().model
        for entry in (self.catalog.get(default), *self.catalog.visible()):
            if self.catalog.route(entry).key.usable:
                return entry.id
        return default

    def on_mount(self) -> None:
        self._catch_signals(install=True)
        self.call_after_refresh(self._first_frame)

    STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")  # Ctrl+C, a logout, a closed terminal

    def _catch_signals(self, *, install: bool) -> None:
        """Quit cleanly on a stop signal rather than die with a private journal on disk."""
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        for name in self.STOP_SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            # Not the main thread, or a platform without them: the default stays.
            with suppress(ValueError, RuntimeError, NotImplementedError):
                if install:
                    loop.add_signal_handler(signum, self._stop_signal, signum)
                else:
                    loop.remove_signal_handler(signum)

    def _stop_signal(self, signum: int) -> None:
        """A private session's journal is deleted at once (the terminal may be gone, and
        quitting may not get far), then Kept quits as with Ctrl+Q."""
        if self.session.private:
            with suppress(OSError):  # if it cannot be, the next start of Kept deletes it
                self.store.discard(self.session.journal)
                _forget_private(self.store)
        self.exit(return_code=128 + signum)

    def get_default_screen(self) -> Screen[None]:
        from app.screens.chat import ChatScreen

        return ChatScreen()

    def _first_frame(self) -> None:
        self.ready_at = time.perf_counter()
        self.log.info(f"first screen ready in {(self.ready_at - STARTED) * 1000:.0f} ms")
        for problem in self.problems:
            self.notify(problem, title="Settings", severity="warning", timeout=10, markup=False)
        self.run_worker(self._find_session, thread=True, group="session", exit_on_error=False)
        self.jobs.start()
        self.run_worker(self._check_keys, thread=True, group="keys", exit_on_error=False)
        self.run_worker(self._warm_up, thread=True, group="warm-up", exit_on_error=False)

    def _warm_up(self) -> None:
        """litellm takes seconds to import: load it now, off the loop, so that the first
        reply is no slower than the next ones; once the session is found, which would
        share the interpreter with it."""
        from catalog.llm import litellm

        self.session.find()  # waits for the thread finding it, or finds it
        litellm()

    def _find_session(self) -> None:
        """The session to go on with: the one used last that no other window has open (or
        a new one), made the live one on the loop."""
        from memory.sessions.orphans import discard_orphaned_private

        session = self.session
        if session.is_found:
            return
        # Every private session a crash or a kill left behind, before resuming one.
        with suppress(OSError):  # a folder Kept cannot list: finding the session says why
            if discard_orphaned_private(self.store.sessions_dir):
                _forget_private(self.store)  # and the files attached in them
        session.find()
        self.call_from_thread(self._bind_session, session)
        from memory.recall.index import build_if_needed

        build_if_needed(self.store.root)  # a process of its own, at low priority

    def _bind_session(self, session: LiveSession) -> None:
        try:
            session.ready()
        except OSError as exc:
            from app.errors import os_error

            self.notify(
                f"No session could be opened: {os_error(exc)}. What you send is tried again.",
                title="Session",
                severity="error",
                markup=False,
            )

    def _session_found(self, session: LiveSession) -> None:
        """The session is found: a resumed one is drawn (a new one looks as it did)."""
        for problem in self.store.skipped.values():
            self.problems.append(problem)
            self.notify(problem, title="Settings", severity="warning", timeout=10, markup=False)
        if session is not self.session or not session.messages:
            return
        self.mutate_reactive(KeptApp.session)
        from app.screens.chat import ChatScreen
        from app.widgets.composer import Composer

        said = [m["content"] for m in session.messages if m.get("role") == "user"]
        for screen in self.screen_stack:  # Up recalls what was said in it, as at start
            if isinstance(screen, ChatScreen):
                for composer in screen.query(Composer):
                    composer.prompts = [c for c in said if c][-200:] + composer.prompts

    def _check_keys(self) -> None:
        """Onboarding when no model can be reached (keyring look-ups can be slow)."""
        self.catalog.keys.read_deferred()
        usable = any(self.catalog.route(e).key.usable for e in self.catalog.visible())
        if not usable:
            from app.screens.onboarding import OnboardingScreen

            self.call_from_thread(self.push_screen, OnboardingScreen())

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
        if any(w.group == "reply" and w.is_running for w in self.workers):
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

    def on_log_screen_retry_requested(self) -> None:
        self.jobs.retry_now()
        self.notify("Retrying pending sessions now.", title="Memory", markup=False)

    def on_chat_screen_turn_ended(self) -> None:
        """Memory decides whether the session has outgrown its window; what it hands back
        is saved in the background."""
        segment = self.session.after_turn()
        if segment is not None:
            self.jobs.save(self.session.journal, segment)

    def on_unmount(self) -> None:
        self._catch_signals(install=False)
        if self.session.private:  # a private session ends with the app
            self.session.close()
        else:
            self.session.release()  # the next start resumes it

    async def action_new_session(self) -> None:
        from app.screens.chat import ChatScreen

        if isinstance(self.screen, ChatScreen):
            await self.screen.action_new_session()

    async def action_private_session(self) -> None:
        from app.screens.chat import ChatScreen

        if isinstance(self.screen, ChatScreen):
            await self.screen.action_new_session(private=True)

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
        self.run_worker(partial(self._remember, text), thread=True, group="remember")

    def _remember(self, text: str) -> None:
        """In a thread: the write is locked and fsynced, and may wait for a consolidation."""
        try:
            number = self.store.remember(text)
        except (OSError, ValueError) as exc:
            self.call_from_thread(
                self.notify, str(exc), title="Not remembered", severity="warning", markup=False
            )
            return
        self.call_from_thread(
            self.notify, f"Remembered (MEMORY.md version {number}).", title="Memory", markup=False
        )

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
        self.run_worker(partial(self._export, argument), thread=True, group="export")

    def _export(self, argument: str) -> None:
        """In a thread: a session's attachments are copied beside its Markdown."""
        from app.export import export_session

        try:
            path = export_session(
                self.session, self.catalog, argument or None, self.store.root / "exports"
            )
        except OSError as exc:
            where = argument or self.store.root / "exports"
            self.call_from_thread(
                self.notify,
                f"Could not export to {where}: {exc.strerror or exc}.",
                severity="error",
                markup=False,
            )
            return
        self.call_from_thread(self._exported, path)

    def _exported(self, path: Path) -> None:
        if self.session.private:
            self.notify(
                f"This private session is exported to {path}, outside Kept's private "
                "clean-up: that file stays until you delete it.",
                title="Export",
                severity="warning",
                markup=False,
            )
            return
        self.notify(f"Session exported to {path}", title="Export", markup=False)

    def action_copy(self, argument: str = "") -> None:
        from app.export import last_code_block

        replies = [
            m["content"]
            for m in self.session.messages
            if m.get("role") == "assistant" and m.get("content")
        ]
        if not replies:
            self.notify("There is no reply to copy yet.", severity="warning", markup=False)
            return
        text = replies[-1]
        if argument.strip().lower() == "code":
            text = last_code_block(text)
            if text is None:
                self.notify("The last reply has no code block.", severity="warning", markup=False)
                return
        # OSC 52 to the terminal, and Textual's own clipboard (what a paste in Kept reads);
        # then the system's clipboard tool, off the loop: it may wait for its display.
        self.copy_to_clipboard(text)
        self.run_worker(
            partial(self._copy_with_tool, text), thread=True, group="copy", exit_on_error=False
        )

    def _copy_with_tool(self, text: str) -> None:
        """Say how `text` was copied: with the system's tool, or only through the terminal."""
        from app.clipboard import copy_notice, copy_with_tool

        copy = copy_with_tool(text)
        self.call_from_thread(
            self.notify,
            copy_notice(len(text), copy),
            title="Copy",
            severity="warning" if copy.problem else "information",
            markup=False,
        )


def _forget_private(store: MemoryStore) -> None:
    from memory.chat.attachments import forget_private  # not imported before the first frame

    forget_private(store)


def run(app: KeptApp | None = None, *, headless: bool = False) -> int:
    """Start the app (the `kept` command with no arguments); non-zero when it crashed."""
    if app is None:
        try:
            app = KeptApp()
            _refuse_read_only(app.store)
        except OSError as exc:  # e.g. a data folder the user made read-only
            import sys

            from app.errors import os_error

            print(f"kept: {os_error(exc)}", file=sys.stderr)
            return 2
    app.run(headless=headless)
    return app.return_code or 0


def _refuse_read_only(store: MemoryStore) -> None:
    """A data folder the user made read-only is said before the app starts (the session
    is found after the first frame, too late to say it instead of starting)."""
    from memory.data.files import ensure_dir

    for folder in (store.root, store.sessions_dir):
        if folder.is_dir():
            ensure_dir(folder)  # raises, naming the folder, if it is read-only
