"""The reply being written: one turn drawn on the chat as it streams (`Reply`), and the
worker that writes it with the messages typed meanwhile (`Replies`), owned by the app so
that /new, Ctrl+N and continuing a session stop it from any screen."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from textual.worker import Worker, WorkerState

from app.messages import TurnEnded
from app.widgets.status_bar import StatusBar
from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from app.main import KeptApp
    from app.screens.chat import ChatScreen
    from app.widgets.message import MessageView
    from catalog import Attempt
    from catalog.mcp import McpTool
    from memory import LiveSession
    from memory.chat.turn import Approval, Turn
    from memory.sessions.journal import Queued

FRAME = 1 / 30  # how often streamed text is drawn
THINKING = "thinking…"
ENDED = (WorkerState.SUCCESS, WorkerState.CANCELLED, WorkerState.ERROR)


class Replies:
    """The reply being written, if any, and what was typed while it was: journaled, drawn
    as queued, and sent in one turn when it ends."""

    def __init__(self, app: KeptApp) -> None:
        self.app = app
        self.worker: Worker[Turn] | None = None
        self.waiting: list[tuple[Queued, MessageView]] = []
        self._chat: ChatScreen | None = None  # where the reply is drawn
        self._session: LiveSession | None = None  # the session it answers

    @property
    def replying(self) -> bool:
        """A reply is being written (Esc cancels it)."""
        return self.worker is not None and self.worker.is_running

    def start(self, chat: ChatScreen, view: MessageView) -> None:
        """Write the reply to the session as it is now into `view`, on `chat`."""
        self._chat, self._session = chat, self.app.session
        self.worker = self.app.run_worker(
            Reply(chat, view).run(), group="reply", exclusive=True, exit_on_error=False
        )

    async def finished(self) -> None:
        """Wait until the reply being written, if any, has ended, however it ended."""
        from textual.worker import WorkerCancelled, WorkerFailed

        if self.worker is not None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await self.worker.wait()

    def cancel(self) -> None:
        if self.replying and self.worker is not None:
            self.worker.cancel()

    async def stop(self) -> None:
        """Before the session closes: queued messages stay in it (it journals them as
        said), none is sent to a model; the reply journals what it showed, then ends."""
        self.waiting.clear()
        if self.replying:
            self.cancel()
            await self.finished()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The reply ended: what was typed meanwhile is sent; a cancel or a crash is said."""
        chat = self._chat
        if event.worker is not self.worker or chat is None or event.state not in ENDED:
            return
        chat.call_after_refresh(chat.send_waiting)
        if event.state is WorkerState.CANCELLED:
            chat.query_one(StatusBar).activity = ""
            if self.app.session is self._session:  # stopped by /new: that chat is gone
                chat.notice("Reply cancelled.", kind="info")
        elif event.state is WorkerState.ERROR:
            chat.query_one(StatusBar).activity = ""
            error = event.worker.error
            chat.notice(
                f"Something went wrong: {type(error).__name__}: "
                f"{clean_text(str(error))}. Your message is saved in the session.",
                kind="error",
            )


class Reply:
    """One turn, streamed into its view on the chat screen: the status bar says what the
    turn is doing, tool calls are drawn above the reply, and its end is labelled."""

    def __init__(self, chat: ChatScreen, view: MessageView) -> None:
        self.chat = chat
        self.view = view
        self.bar = chat.query_one(StatusBar)
        self.restart = asyncio.Event()  # a new attempt: what the last one drew goes

    def on_attempt(self, attempt: Attempt) -> None:
        from catalog import Outcome

        if attempt.outcome is not Outcome.OK:
            self.restart.set()
            if attempt.outcome is not Outcome.SKIPPED:
                label = self.chat.label(attempt.model)
                self.bar.activity = f"{label}: {attempt.kind}; trying again…"

    async def pump(self) -> None:
        """Draw what arrived, a frame at a time."""
        while True:
            await asyncio.sleep(FRAME)
            if self.restart.is_set():
                self.restart.clear()
                await self.view.restart()
            await self.view.flush()

    async def approve(self, tool: McpTool, arguments: str) -> Approval:
        self.bar.activity = f"waiting for you: run {tool.name}?"
        try:
            return await self.chat.tool_servers.approve(tool, arguments)
        finally:
            self.bar.activity = THINKING

    async def run(self) -> Turn:
        from memory.chat.turn import answer

        app, view, tools = self.chat.app, self.view, self.chat.tool_servers
        self.bar.activity = THINKING
        pumping = asyncio.create_task(self.pump())
        try:
            turn = await answer(
                app.session,
                app.catalog,
                app.model,
                on_delta=view.feed,
                on_attempt=self.on_attempt,
                policy=app.policy,
                now=app.clock(),
                tools=tools.toolbox,
                approve=self.approve,
                on_tool=lambda run: tools.show(run, view),
            )
        finally:
            pumping.cancel()
            self.bar.activity = ""
        await view.finish(turn.text if turn.ok or turn.cut_off else None)
        self.finish(turn)
        return turn

    def finish(self, turn: Turn) -> None:
        """Count the turn, label the reply by how it went, and say what went wrong."""
        chat = self.chat
        chat.tokens += turn.prompt_tokens + turn.completion_tokens
        chat.cost += turn.cost
        if turn.ok:
            self.view.set_who(self.answered_by(turn))
        elif turn.cut_off:
            label = chat.label(turn.model)
            self.view.set_who(f"{label} — cut off")
            chat.notice(
                f"The reply was cut off ({label}: {turn.reason}); what arrived is kept "
                "above and in the session.\nNext: send your message again (or ask it to "
                "go on), or pick another model with /model.",
                kind="error",
            )
        else:
            from app.words.chat import failure_notice

            self.view.remove()
            chat.notice(
                failure_notice(chat.app.catalog, turn.requested, turn.attempts), kind="error"
            )
        for notice in chat.tool_servers.unsaid(turn.notices):
            chat.notice(notice, kind="info")
        chat.post_message(TurnEnded())

    def answered_by(self, turn: Turn) -> str:
        """The label of an answered reply: who answered, for whom, and what it searched."""
        from memory.chat.turn import describe_search

        label = self.chat.label(turn.model)
        if turn.fell_back:
            # Said at once: a model that is cooling down is not waited for.
            why = f" ({turn.unavailable})" if turn.unavailable else ""
            label = f"{self.chat.label(turn.requested)} is unavailable — answered by {label}{why}"
        if turn.searches:
            label += (
                "  (searched history: "
                + ", ".join(repr(describe_search(s)) for s in turn.searches)
                + ")"
            )
        return label
