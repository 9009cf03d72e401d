"""The chat screen: messages, the composer, the status bar."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Static

from app import commands, paths
from app.background import MemoryStatus
from app.messages import NewSessionRequested
from app.screens.chat_attachments import WAIT_TO_ATTACH, ChatAttachments
from app.widgets.composer import ATTACH, Chips, Composer
from app.widgets.message import MessageView
from app.widgets.status_bar import StatusBar
from catalog.llm import is_loaded, litellm
from catalog.models import short_label

if TYPE_CHECKING:
    from app.chat_tools import ChatTools
    from app.main import KeptApp
    from memory import LiveSession
    from memory.chat.attachments import Attachment
    from memory.message import Message

__all__ = ["PAGE", "QUEUED", "WAIT_TO_ATTACH", "ChatScreen"]

PRIVATE_GREETING = (
    "Private session started: nothing of it is saved to memory, and its journal is "
    "deleted when it ends."
)
QUEUED = "You · queued until the reply ends (Esc: send now)"
MOST_CHOICES_SHOWN = 8
ATTACH_HINT = "Type the path of a file to attach (Tab completes it), then Enter."
PAGE = 40  # messages drawn at a time: the newest first, earlier ones on request


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

    def __init__(self) -> None:
        super().__init__()
        self._shown_from = 0
        self._tool_servers: ChatTools | None = None
        self.attachments = ChatAttachments(self)

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
        users = [m for m in self.app.session.messages if m.get("role") == "user"]
        composer.prompts = [text for m in users if (text := m.get("content"))][-200:]
        composer.prompt_pastes = {
            text: pasted
            for m in users
            if (text := m.get("content")) and (pasted := m.get("pasted"))
        }
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
        """A reply is being written (Esc cancels it): the app's, shown here."""
        return self.app.replies.replying

    async def reply_finished(self) -> None:
        """Wait until the reply being written, if any, has ended, however it ended."""
        await self.app.replies.finished()

    # --- drawing the session --------------------------------------------------------------

    def _view_for(self, message: Message) -> MessageView | None:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "user":
            return MessageView("You", content, kind="user", attachments=message.get("attachments"))
        if role == "assistant" and content:
            return MessageView(self.label(message.get("model")), content, kind="assistant")
        return None

    def label(self, model: str | None) -> str:
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
        self.app.replies.waiting.clear()  # a new or continued session: its queue went with it

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
        self.model_label = self.label(model)

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
            self.send(event.text, event.pasted)

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
        self.attachments.attach(event.path)

    def action_attach(self, argument: str = "") -> None:
        """/attach PATH…: each file is read in a worker; its chip shows it meanwhile."""
        self.attachments.attach_paths(argument)

    def attach(self, path: Path) -> None:
        """Attach the file at `path` to the next message, as /attach does."""
        self.attachments.attach(path)

    def action_detach(self, name: str = "") -> None:
        """/detach NAME removes that attachment; /detach alone removes them all."""
        self.attachments.detach(name)

    @on(Composer.DetachLast)
    def detach_last(self) -> None:
        self.attachments.detach_last()

    def _give_back(self, text: str, pasted: list[list[int]]) -> None:
        """A message that was not sent goes back where the user wrote it, what of it was
        pasted still known as pasted."""
        composer = self.query_one(Composer)
        if not composer.text.strip():
            composer.load_pasted(text, pasted)

    def run_command(self, text: str) -> None:
        command, argument = commands.parse(text)
        if command is None:
            near = commands.closest(text)
            hint = f" Did you mean {near}?" if near else ""
            self.notice(f"Unknown command `{text.split()[0]}`.{hint} Type /help for the list.")
            return
        if command.action in ("new_session", "private_session"):
            self.post_message(NewSessionRequested(private=command.action == "private_session"))
            return
        action = f"{command.action}({argument!r})" if command.takes_argument else command.action
        self.run_action_on_app(action)

    def run_action_on_app(self, action: str) -> None:
        self.app.call_later(self.app.run_action, action)

    def action_focus_composer(self) -> None:
        self.query_one(Composer).focus()

    # --- a reply ----------------------------------------------------------------------------

    def send(self, text: str, pasted: list[list[int]] | None = None) -> None:
        """Send the user's message; `pasted` are the spans of it that were pasted, not
        typed, journaled with it (memory learns only from what the user typed)."""
        pasted = pasted or []
        chips = self.query_one(Chips)
        attachments = chips.attachments
        problem = self.attachments.cannot_send(text, attachments)
        if problem:
            self._give_back(text, pasted)
            self.notice(problem, kind="error")
            return
        # Journaled (and fsynced) before anything else can happen, whatever the screen is
        # doing: quitting, /new or a crash a moment later still finds the message.
        replies = self.app.replies
        try:
            if replies.replying:
                waiting = self.app.session.queue(text, pasted)
            else:
                records = self._journal(text, attachments, pasted)
        except OSError as exc:  # a full disk: the text goes back where the user wrote it
            self._give_back(text, pasted)
            self.notice(
                f"Your message could not be saved ({exc.filename or 'journal'}: "
                f"{exc.strerror or exc}), so it was not sent. It is back in the "
                "composer: free some space and press Enter again.",
                kind="error",
            )
            return
        if replies.replying:
            replies.waiting.append((waiting, self.add(MessageView(QUEUED, text, kind="user"))))
            return
        self.add(MessageView("You", text, kind="user", attachments=records))
        chips.clear()
        self.attachments.changed()
        self._reply_now()

    def _journal(
        self, text: str, attachments: list[Attachment], pasted: list[list[int]]
    ) -> list[dict[str, Any]]:
        """Append the user's message to the session; the records of what it attaches."""
        session = self.app.session
        message: dict[str, Any] = {"role": "user", "content": text}
        if pasted:
            message["pasted"] = pasted
        records: list[dict[str, Any]] = []
        if attachments:
            from memory.chat.attachments import keep

            records = [keep(session.store, a, private=session.private) for a in attachments]
            message["attachments"] = records
        session.append(message)
        return records

    def send_waiting(self) -> None:
        """The reply has ended, however it ended: what was typed meanwhile is sent now,
        in one turn, in the order typed."""
        replies = self.app.replies
        if not replies.waiting or replies.replying:
            return
        views = [view for _, view in replies.waiting]
        replies.waiting.clear()
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
        view = self.add(MessageView(f"{self.label(self.app.model)} …", kind="assistant"))
        self.app.replies.start(self, view)

    def action_cancel(self) -> None:
        self.app.replies.cancel()
