"""The chat screen: messages, the composer, the status bar."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Static
from textual.worker import Worker, WorkerState

from app import commands, paths
from app.background import MemoryStatus
from app.widgets.composer import ATTACH, Chip, Chips, Composer
from app.widgets.message import MessageView
from app.widgets.status_bar import StatusBar
from catalog.llm import is_loaded, litellm
from catalog.models import short_label
from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from app.chat_tools import ChatTools
    from app.main import KeptApp
    from catalog import Attempt
    from memory import LiveSession
    from memory.chat.attachments import Attachment
    from memory.chat.turn import Turn
    from memory.sessions.journal import Queued

PRIVATE_GREETING = (
    "Private session started: nothing of it is saved to memory, and its journal is "
    "deleted when it ends."
)
QUEUED = "You · queued until the reply ends (Esc: send now)"
WAIT_TO_ATTACH = (
    "A message with attachments is sent once the reply ends: it is back in the composer "
    "with them; press Enter again then (Esc stops the reply now)."
)
MOST_CHOICES_SHOWN = 8
ATTACH_HINT = "Type the path of a file to attach (Tab completes it), then Enter."
PAGE = 40  # messages drawn at a time: the newest first, earlier ones on request
FRAME = 1 / 30  # how often streamed text is drawn


class ChatScreen(Screen[None]):
    """The session as a conversation. What the status bar shows is held in reactives here,
    bound to the bar, and follows the app's model, memory status and session by itself."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel reply", show=False),
        Binding("ctrl+l", "focus_composer", "Focus prompt", show=False),
    ]

    app: KeptApp

    model_label: var[str] = var("")
    memory: var[str] = var("")
    tokens: var[int] = var(0)
    cost: var[float] = var(0.0)
    private: var[bool] = var(False)

    class TurnEnded(Message):
        """A reply has finished (answered, cut off or failed): the session may have
        outgrown its window; the app asks memory what to save."""

    def __init__(self) -> None:
        super().__init__()
        self._shown_from = 0
        self._reply: Worker[Turn] | None = None
        # Typed while a reply is written: journaled, drawn as queued, sent when it ends.
        self._waiting: list[tuple[Queued, MessageView]] = []
        self._tool_servers: ChatTools | None = None

    @property
    def tool_servers(self) -> ChatTools:
        """The user's tool servers, read from config on first use (not at start-up)."""
        if self._tool_servers is None:
            from app.chat_tools import ChatTools

            self._tool_servers = ChatTools(self)
        return self._tool_servers

    def action_tools(self, argument: str = "") -> None:
        self.tool_servers.open_screen()

    async def on_unmount(self) -> None:
        if self._tool_servers is not None:
            await self._tool_servers.close()

    def _used_so_far(self) -> tuple[int, float]:
        """Tokens and cost of the session's turns: a resumed session counts on from them."""
        answers = [m for m in self.app.session.messages if m.get("role") == "assistant"]
        return (
            sum(int(m.get("tokens") or 0) for m in answers),
            sum(float(m.get("cost") or 0.0) for m in answers),
        )

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="messages")
        yield Static(id="suggestions", markup=False)
        yield Chips(id="chips")
        composer = Composer(id="composer", placeholder="Message Kept — / for commands")
        composer.commands = [c.name for c in commands.SLASH_COMMANDS]
        composer.prompts = [
            m["content"]
            for m in self.app.session.messages
            if m.get("role") == "user" and m.get("content")
        ][-200:]
        yield composer
        yield StatusBar().data_bind(
            ChatScreen.model_label,
            ChatScreen.memory,
            ChatScreen.tokens,
            ChatScreen.cost,
            ChatScreen.private,
        )
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "memory_status", self._memory_changed)
        self.watch(self.app, "model", self._model_changed)
        self.watch(self.app, "session", self._session_changed, init=False)
        self.tokens, self.cost = self._used_so_far()
        self.show_session()
        self.query_one(Composer).focus()

    @property
    def replying(self) -> bool:
        """A reply is being written (Esc cancels it)."""
        return self._reply is not None and self._reply.is_running

    async def reply_finished(self) -> None:
        """Wait until the reply being written, if any, has ended, however it ended."""
        from textual.worker import WorkerCancelled, WorkerFailed

        if self._reply is not None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await self._reply.wait()

    # --- drawing the session --------------------------------------------------------------

    def _view_for(self, message: dict[str, Any]) -> MessageView | None:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "user":
            return MessageView("You", content, kind="user", attachments=message.get("attachments"))
        if role == "assistant" and content:
            return MessageView(self._label(message.get("model")), content, kind="assistant")
        return None

    def _label(self, model: str | None) -> str:
        if model and model in self.app.catalog:
            return self.app.catalog.get(model).label
        return short_label(model) if model else "Assistant"  # a model since removed

    def show_session(self, greeting: str = "New session started. What's on your mind?") -> None:
        """Draw the newest page of the session; earlier messages load on request."""
        log = self.query_one("#messages", VerticalScroll)
        log.remove_children()
        messages = self.app.session.messages
        self._shown_from = max(0, len(messages) - PAGE)
        views: list[Widget] = [v for m in messages[self._shown_from :] if (v := self._view_for(m))]
        if self._shown_from:
            views.insert(0, self._earlier_button())
        if not views:
            views.append(MessageView("Kept", greeting, kind="info"))
        log.mount_all(views)
        log.anchor()
        self.private = self.app.session.private
        self._waiting.clear()  # a new or continued session: the queue went with the old one

    def _earlier_button(self) -> Button:
        return Button(
            f"Show {min(PAGE, self._shown_from)} earlier messages ({self._shown_from} in all)",
            id="earlier",
            variant="default",
        )

    @on(Button.Pressed, "#earlier")
    def show_earlier(self) -> None:
        """Draw the page before the oldest message shown."""
        log = self.query_one("#messages", VerticalScroll)
        button = self.query_one("#earlier", Button)
        start = max(0, self._shown_from - PAGE)
        views = [
            v
            for m in self.app.session.messages[start : self._shown_from]
            if (v := self._view_for(m))
        ]
        self._shown_from = start
        log.mount_all(views, after=button)
        if start:
            button.label = f"Show {min(PAGE, start)} earlier messages ({start} in all)"
        else:
            button.remove()

    def add(self, view: MessageView) -> MessageView:
        self.query_one("#messages", VerticalScroll).mount(view)
        return view

    def notice(self, text: str, kind: str = "notice") -> None:
        self.add(MessageView("Kept", text, kind=kind))

    def _memory_changed(self, status: MemoryStatus) -> None:
        self.memory = str(status)  # worded in one place: MemoryStatus

    def _model_changed(self, model: str) -> None:
        self.model_label = self._label(model)

    def _session_changed(self, session: LiveSession) -> None:
        """A new, private or continued session is the live one: draw it, count it."""
        self.tokens, self.cost = self._used_so_far()
        if session.private:
            self.show_session(greeting=PRIVATE_GREETING)
        else:
            self.show_session(
                greeting="Continuing the session." if session.messages else "New session started."
            )

    # --- the composer ---------------------------------------------------------------------

    @on(Composer.Changed)
    def suggest(self) -> None:
        box = self.query_one("#suggestions", Static)
        composer = self.query_one(Composer)
        matches = composer.matching_commands()
        composer.offer = None if matches else paths.pasted_path(composer.text)
        if matches:
            box.update(
                "\n".join(
                    f"{c.name:9} {c.help}" for c in commands.SLASH_COMMANDS if c.name in matches
                )
            )
        elif composer.offer is not None:
            box.update(
                f"Attach {composer.offer.name}? Tab attaches it; Enter sends the text as it is."
            )
        elif composer.text == ATTACH:
            box.update(ATTACH_HINT)
        box.set_class(
            bool(matches) or composer.offer is not None or composer.text == ATTACH, "visible"
        )
        if not is_loaded():
            self._warm_up()

    @work(thread=True, exclusive=True, group="warm-up", exit_on_error=False)
    def _warm_up(self) -> None:
        """Load litellm while the user types, so the first reply starts sooner."""
        litellm()

    @on(Composer.Submitted)
    def submitted(self, event: Composer.Submitted) -> None:
        self.query_one("#suggestions", Static).set_class(False, "visible")
        if event.text.startswith("/") and not event.offered:  # a path is sent as it is
            self.run_command(event.text)
        else:
            self.send(event.text)

    # --- attachments ----------------------------------------------------------------------

    @on(Composer.PathChoices)
    def show_choices(self, event: Composer.PathChoices) -> None:
        box = self.query_one("#suggestions", Static)
        shown = event.choices[:MOST_CHOICES_SHOWN]
        more = len(event.choices) - len(shown)
        box.update("  ".join(shown) + (f"  (and {more} more)" if more else ""))
        box.set_class(bool(shown), "visible")

    @on(Composer.AttachPath)
    def attach_offered(self, event: Composer.AttachPath) -> None:
        self.query_one("#suggestions", Static).set_class(False, "visible")
        self.attach(event.path)

    def action_attach(self, argument: str = "") -> None:
        """/attach PATH…: each file is read in a worker; its chip shows it meanwhile."""
        try:
            found = paths.split_paths(argument)
        except ValueError as exc:
            self.notice(f"{exc} Nothing was attached.")
            return
        if not found:  # from the palette, or /attach alone: the path is asked for
            composer = self.query_one(Composer)
            if not composer.text.strip():
                composer.load_text(ATTACH)
                composer.move_cursor(composer.document.end)
            composer.focus()
            return
        for path in found:
            self.attach(Path(path))

    def attach(self, path: Path) -> None:
        chip = self.query_one(Chips).add(path)
        self._chips_changed()
        self._read(chip)

    @work(thread=True, group="attach", exit_on_error=False)
    def _read(self, chip: Chip) -> None:
        """Read the file off the event loop: a big PDF never stops the typing."""
        from memory.chat.attachments import AttachmentError, can_take, keep, read_attachment

        try:
            attachment = read_attachment(chip.path, self.app.store.settings.attachments)
        except AttachmentError as exc:
            self.app.call_from_thread(self._not_attached, chip, str(exc))
            return
        except OSError as exc:  # said in one sentence, whatever the domain missed
            why = exc.strerror or str(exc)
            self.app.call_from_thread(
                self._not_attached, chip, f"{chip.path.name} could not be read: {why}."
            )
            return
        except Exception as exc:  # a reader's own failure: the chip must not wait for ever
            self.app.call_from_thread(
                self._not_attached,
                chip,
                f"{chip.path.name} could not be read ({type(exc).__name__}: {exc}).",
            )
            return
        if not is_loaded():
            litellm()  # what the model can take, and its window, are litellm's figures
        if attachment.kind == "image":  # a local server is asked here, not at Enter
            can_take(self.app.model, {"image"}, self.app.catalog)
        with contextlib.suppress(OSError):  # stored and fsynced here: Enter finds it stored
            keep(self.app.store, attachment, private=self.app.session.private)
        self.app.call_from_thread(self._read_done, chip, attachment)

    def _read_done(self, chip: Chip, attachment: Attachment) -> None:
        if chip in self.query_one(Chips).chips:  # not detached while it was read
            chip.ready(attachment)
            for sentence in attachment.notices:  # a PDF page without text, say
                self.notice(sentence)

    def _not_attached(self, chip: Chip, sentence: str) -> None:
        self.query_one(Chips).drop(chip)
        self._chips_changed()
        self.notice(clean_text(sentence), kind="error")

    def action_detach(self, name: str = "") -> None:
        """/detach NAME removes that attachment; /detach alone removes them all."""
        chips = self.query_one(Chips)
        if not name:
            chips.clear()
        else:
            named = [c for c in chips.chips if c.name_shown == name] or [
                c for c in chips.chips if str(c.path) == name
            ]
            if not named:
                attached = ", ".join(c.name_shown for c in chips.chips) or "nothing"
                self.notice(f"No attachment is named {name}; attached: {attached}.")
                return
            chips.drop(named[-1])
        self._chips_changed()

    @on(Composer.DetachLast)
    def detach_last(self) -> None:
        chips = self.query_one(Chips)
        if chips.chips:
            chips.drop(chips.chips[-1])
            self._chips_changed()

    def _chips_changed(self) -> None:
        self.query_one(Composer).carrying = bool(self.query_one(Chips).chips)

    def _window(self) -> int | None:
        """The current model's context window; litellm's figures only once it is loaded
        (loading it here would freeze the screen), the catalog's until then."""
        catalog, model = self.app.catalog, self.app.model
        if model not in catalog:
            return None
        entry = catalog.get(model)
        pricing = catalog.pricing(entry) if is_loaded() else None
        return (pricing.context_window if pricing else None) or entry.context_window

    def _cannot_send(self, text: str, attachments: list[Attachment]) -> str | None:
        """Why the message cannot go with these attachments, in one sentence (or None)."""
        from memory.chat.attachments import can_take, does_not_fit, vision_model_sentence

        reading = self.query_one(Chips).reading
        if reading:
            return (
                f"{reading[0].path.name} is still being read: your message is back in the "
                "composer; press Enter again once its chip shows its size."
            )
        if not attachments:
            return None
        if self.replying:
            return WAIT_TO_ATTACH
        kinds = {a.kind for a in attachments}
        if not can_take(self.app.model, kinds, self.app.catalog):
            return vision_model_sentence(self.app.catalog, self.app.model)
        window = self._window()
        return does_not_fit(attachments, text, window) if window else None

    def _give_back(self, text: str) -> None:
        """A message that was not sent goes back where the user wrote it."""
        composer = self.query_one(Composer)
        if not composer.text.strip():
            composer.load_text(text)
            composer.move_cursor(composer.document.end)

    def run_command(self, text: str) -> None:
        command, argument = commands.parse(text)
        if command is None:
            near = commands.closest(text)
            hint = f" Did you mean {near}?" if near else ""
            self.notice(f"Unknown command `{text.split()[0]}`.{hint} Type /help for the list.")
            return
        action = f"{command.action}({argument!r})" if command.takes_argument else command.action
        if command.action in ("new_session", "private_session"):
            self.call_later(self.action_new_session, command.action == "private_session")
            return
        self.run_action_on_app(action)

    def run_action_on_app(self, action: str) -> None:
        self.app.call_later(self.app.run_action, action)

    def action_focus_composer(self) -> None:
        self.query_one(Composer).focus()

    async def action_new_session(self, private: bool = False) -> None:
        # Queued messages stay in the closing session (it journals them as said): none is
        # sent to a model once the session has ended.
        self._waiting.clear()
        if self._reply is not None and self._reply.is_running:
            # Let the reply journal what it showed before the session closes.
            self._reply.cancel()
            await self.reply_finished()
        self.app.new_session(private=private)  # the new session is drawn when it is live

    # --- a reply ----------------------------------------------------------------------------

    def send(self, text: str) -> None:
        chips = self.query_one(Chips)
        attachments = chips.attachments
        problem = self._cannot_send(text, attachments)
        if problem:
            self._give_back(text)
            self.notice(problem, kind="error")
            return
        # Journaled (and fsynced) before anything else can happen, whatever the screen is
        # doing: quitting, /new or a crash a moment later still finds the message.
        records: list[dict[str, Any]] = []
        try:
            if self.replying:
                waiting = self.app.session.queue(text)
            else:
                if attachments:
                    from memory.chat.attachments import keep

                    session = self.app.session
                    records = [keep(session.store, a, private=session.private) for a in attachments]
                    message = {"role": "user", "content": text, "attachments": records}
                else:
                    message = {"role": "user", "content": text}
                self.app.session.append(message)
        except OSError as exc:  # a full disk: the text goes back where the user wrote it
            self._give_back(text)
            self.notice(
                f"Your message could not be saved ({exc.filename or 'journal'}: "
                f"{exc.strerror or exc}), so it was not sent. It is back in the "
                "composer: free some space and press Enter again.",
                kind="error",
            )
            return
        if self.replying:
            self._waiting.append((waiting, self.add(MessageView(QUEUED, text, kind="user"))))
            return
        self.add(MessageView("You", text, kind="user", attachments=records))
        chips.clear()
        self._chips_changed()
        self._reply_now()

    def _send_waiting(self) -> None:
        """The reply has ended, however it ended: what was typed meanwhile is sent now,
        in one turn, in the order typed."""
        if not self._waiting or self.replying:
            return
        views = [view for _, view in self._waiting]
        self._waiting.clear()
        try:
            sent = self.app.session.send_queued()
        except (OSError, ValueError) as exc:  # still queued in the journal: resumed later
            self.notice(
                f"Your queued message could not be sent ({exc}); it is kept in the session.",
                kind="error",
            )
            return
        for view in views:
            view.set_who("You")
        if sent:
            self._reply_now()

    def _reply_now(self) -> None:
        view = self.add(MessageView(f"{self._label(self.app.model)} …", kind="assistant"))
        self._reply = self.run_worker(
            self._answer(view), group="reply", exclusive=True, exit_on_error=False
        )

    async def _answer(self, view: MessageView) -> Turn:
        from catalog import Outcome
        from catalog.mcp import McpTool
        from memory.chat.turn import Approval, answer

        bar = self.query_one(StatusBar)
        bar.activity = "thinking…"
        restart = asyncio.Event()

        def on_attempt(attempt: Attempt) -> None:
            if attempt.outcome is not Outcome.OK:
                restart.set()
                if attempt.outcome is not Outcome.SKIPPED:
                    bar.activity = f"{self._label(attempt.model)}: {attempt.kind}; trying again…"

        async def pump() -> None:
            while True:
                await asyncio.sleep(FRAME)
                if restart.is_set():
                    restart.clear()
                    await view.restart()
                await view.flush()

        tools = self.tool_servers

        async def approve(tool: McpTool, arguments: str) -> Approval:
            bar.activity = f"waiting for you: run {tool.name}?"
            try:
                return await tools.approve(tool, arguments)
            finally:
                bar.activity = "thinking…"

        pumping = asyncio.create_task(pump())
        try:
            turn = await answer(
                self.app.session,
                self.app.catalog,
                self.app.model,
                on_delta=view.feed,
                on_attempt=on_attempt,
                policy=self.app.policy,
                now=self.app.clock(),
                tools=tools.toolbox,
                approve=approve,
                on_tool=lambda run: tools.show(run, view),
            )
        finally:
            pumping.cancel()
            bar.activity = ""
        await view.finish(turn.text if turn.ok or turn.cut_off else None)
        self._finish(turn, view)
        return turn

    def _finish(self, turn: Turn, view: MessageView) -> None:
        from memory.chat.turn import describe_search

        self.tokens += turn.prompt_tokens + turn.completion_tokens
        self.cost += turn.cost
        if turn.ok:
            label = self._label(turn.model)
            if turn.fell_back:
                # Said at once: a model that is cooling down is not waited for.
                why = f" ({turn.unavailable})" if turn.unavailable else ""
                label = f"{self._label(turn.requested)} is unavailable — answered by {label}{why}"
            if turn.searches:
                label += (
                    "  (searched history: "
                    + ", ".join(repr(describe_search(s)) for s in turn.searches)
                    + ")"
                )
            view.set_who(label)
        elif turn.cut_off:
            label = self._label(turn.model)
            view.set_who(f"{label} — cut off")
            self.notice(
                f"The reply was cut off ({label}: {turn.reason}); what arrived is kept "
                "above and in the session.\nNext: send your message again (or ask it to "
                "go on), or pick another model with /model.",
                kind="error",
            )
        else:
            view.remove()
            from memory.chat.turn import failure_notice

            self.notice(
                failure_notice(self.app.catalog, turn.requested, turn.attempts), kind="error"
            )
        for notice in self.tool_servers.unsaid(turn.notices):
            self.notice(notice, kind="info")
        self.post_message(self.TurnEnded())

    def action_cancel(self) -> None:
        if self._reply is not None and self._reply.is_running:
            self._reply.cancel()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._reply and event.state in (
            WorkerState.SUCCESS,
            WorkerState.CANCELLED,
            WorkerState.ERROR,
        ):
            self.call_after_refresh(self._send_waiting)
        if event.worker is self._reply and event.state is WorkerState.CANCELLED:
            self.query_one(StatusBar).activity = ""
            self.notice("Reply cancelled.", kind="info")
        elif event.worker is self._reply and event.state is WorkerState.ERROR:
            self.query_one(StatusBar).activity = ""
            error = event.worker.error
            self.notice(
                f"Something went wrong: {type(error).__name__}: "
                f"{clean_text(str(error))}. Your message is saved in the session.",
                kind="error",
            )
