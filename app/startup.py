"""Start-up: the theme put in place before the stylesheet is parsed; after the first frame,
the session to go on with (found in a thread, made the live one on the loop), the keys
read, litellm loaded; and the stop signals that end a private session at once."""

from __future__ import annotations

import time
from collections.abc import Iterable
from contextlib import suppress
from typing import TYPE_CHECKING

from textual.app import App

from app.settings import DEFAULT_THEME

if TYPE_CHECKING:
    from textual.theme import Theme

    from app.main import KeptApp
    from memory import LiveSession, MemoryStore

STARTED = time.perf_counter()
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")  # Ctrl+C, a logout, a closed terminal


def first_frame(app: KeptApp) -> None:
    """The first screen is drawn: say the settings' problems, then start the work that
    waited for it, each in a worker of its own."""
    app.ready_at = time.perf_counter()
    app.log.info(f"first screen ready in {(app.ready_at - STARTED) * 1000:.0f} ms")
    for problem in app.problems:
        app.notify(problem, title="Settings", severity="warning", timeout=10, markup=False)
    app.run_worker(app._find_session, thread=True, group="session", exit_on_error=False)
    app.jobs.start()
    app.run_worker(app._check_keys, thread=True, group="keys", exit_on_error=False)
    app.run_worker(app._warm_up, thread=True, group="warm-up", exit_on_error=False)


def warm_up(app: KeptApp) -> None:
    """litellm takes seconds to import: load it now, off the loop, so that the first
    reply is no slower than the next ones; once the session is found, which would
    share the interpreter with it."""
    from catalog.llm import litellm

    app.session.find()  # waits for the thread finding it, or finds it
    litellm()


def find_session(app: KeptApp) -> None:
    """In a thread: the session to go on with, the one used last that no other window has
    open (or a new one), made the live one on the loop."""
    from memory.sessions.orphans import discard_orphaned_private

    session = app.session
    if session.is_found:
        return
    # Every private session a crash or a kill left behind, before resuming one.
    with suppress(OSError):  # a folder Kept cannot list: finding the session says why
        if discard_orphaned_private(app.store.sessions_dir):
            forget_private(app.store)  # and the files attached in them
    session.find()
    app.call_from_thread(bind_session, app, session)
    from memory.recall.index import build_if_needed

    build_if_needed(app.store.root)  # a process of its own, at low priority


def bind_session(app: KeptApp, session: LiveSession) -> None:
    try:
        session.ready()
    except OSError as exc:
        from app.errors import os_error

        app.notify(
            f"No session could be opened: {os_error(exc)}. What you send is tried again.",
            title="Session",
            severity="error",
            markup=False,
        )


def session_found(app: KeptApp, session: LiveSession) -> None:
    """The session is found: a resumed one is drawn (a new one looks as it did)."""
    for problem in session.unreadable.values():
        app.problems.append(problem)
        app.notify(problem, title="Settings", severity="warning", timeout=10, markup=False)
    if session is not app.session or not session.messages:
        return
    app.mutate_reactive(type(app).session)
    from app.screens.chat import ChatScreen
    from app.widgets.composer import Composer

    said = [c for m in session.messages if m.get("role") == "user" and (c := m.get("content"))]
    for screen in app.screen_stack:  # Up recalls what was said in it, as at start
        if isinstance(screen, ChatScreen):
            for composer in screen.query(Composer):
                composer.prompts = said[-200:] + composer.prompts


def check_keys(app: KeptApp) -> None:
    """In a thread: onboarding when no model can be reached (keyring look-ups can be
    slow)."""
    app.catalog.keys.read_deferred()
    usable = any(app.catalog.route(e).key.usable for e in app.catalog.visible())
    if not usable:
        from app.screens.onboarding import OnboardingScreen

        app.call_from_thread(app.push_screen, OnboardingScreen())


def catch_signals(app: KeptApp, *, install: bool) -> None:
    """Quit cleanly on a stop signal rather than die with a private journal on disk."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    for name in STOP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        # Not the main thread, or a platform without them: the default stays.
        with suppress(ValueError, RuntimeError, NotImplementedError):
            if install:
                loop.add_signal_handler(signum, stop_signal, app, signum)
            else:
                loop.remove_signal_handler(signum)


def stop_signal(app: KeptApp, signum: int) -> None:
    """A private session's journal is deleted at once (the terminal may be gone, and
    quitting may not get far), then Kept quits as with Ctrl+Q."""
    if app.session.private:
        with suppress(OSError):  # if it cannot be, the next start of Kept deletes it
            app.store.discard(app.session.journal)
            forget_private(app.store)
    app.exit(return_code=128 + signum)


def forget_private(store: MemoryStore) -> None:
    from memory.chat.attachments import forget_private  # not imported before the first frame

    forget_private(store)


def first_theme(app: KeptApp, themes: Iterable[Theme]) -> None:
    """Kept's themes registered, and the one config.toml names put in place (the default,
    with a notice, if it is unknown), before the stylesheet is first parsed."""
    for theme in themes:
        app.register_theme(theme)
    wanted = app.settings.app.theme
    if wanted not in app.available_themes:
        app.problems.append(
            f"config.toml: [app] theme '{wanted}' is unknown; using "
            f"{DEFAULT_THEME}. Pick one with /theme."
        )
        wanted = DEFAULT_THEME
    # What setting `theme` does: its variables, classes and colours. Set as usual, the
    # change would parse and apply every rule a second time before the first frame; and
    # the theme read at start-up is not saved.
    app.set_reactive(App.theme, wanted)
    dark = app.current_theme.dark
    app.set_class(True, f"-theme-{wanted}", update=False)
    app.set_class(dark, "-dark-mode", update=False)
    app.set_class(not dark, "-light-mode", update=False)
    app._refresh_truecolor_filter(app.ansi_theme)
    app.stylesheet.set_variables(app.get_css_variables())


def refuse_read_only(store: MemoryStore) -> None:
    """A data folder the user made read-only is said before the app starts (the session
    is found after the first frame, too late to say it instead of starting)."""
    from memory.data.files import ensure_dir

    for folder in (store.root, store.sessions_dir):
        if folder.is_dir():
            ensure_dir(folder)  # raises, naming the folder, if it is read-only
