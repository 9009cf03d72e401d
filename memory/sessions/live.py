"""The live session: what the chat appends to, and what the model is shown of it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from memory.data.files import HeldLock
from memory.data.store import MemoryStore
from memory.message import Message
from memory.sessions.journal import Journal, Queued, Segment

CONTEXT_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """A cheap estimate (about 4 characters a token) for deciding when to compact; an
    attached file counts what its record says it costs."""
    return (
        sum(
            len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in messages
        )
        // 4
        + 4 * len(messages)
        + sum(_attached_tokens(m) for m in messages)
    )


def _attached_tokens(message: Mapping[str, Any]) -> int:
    found = message.get("attachments")
    if not isinstance(found, list):
        return 0
    tokens = (r.get("tokens") for r in found if isinstance(r, dict))
    return sum(t for t in tokens if isinstance(t, int) and not isinstance(t, bool) and t > 0)


def _last_used(journal: Journal) -> int:
    try:
        return journal.path.stat().st_mtime_ns
    except OSError:  # moved to done/ by another process a moment ago
        return 0


def _sent(queued: Queued) -> dict[str, Any]:
    """The user message a queued one becomes, its pasted spans with it."""
    message: dict[str, Any] = {"role": "user", "content": queued.content, "queued": queued.id}
    if queued.pasted:
        message["pasted"] = [list(span) for span in queued.pasted]
    return message


def _forget_private(store: MemoryStore) -> None:
    from memory.chat.attachments import forget_private  # not imported before the first frame

    forget_private(store)


class LiveSession:
    """An active session journal plus the window of it that the model sees."""

    def __init__(self, store: MemoryStore, journal: Journal, lock: HeldLock) -> None:
        self.store = store
        self._journal = journal
        self._lock = lock
        # A private session leaves older messages out of the context without queuing them.
        self._dropped = 0
        # A continued session shows the model its recent past, though memory already has it.
        self._context_start: int | None = None
        # A session still to be found (`to_find`): the one found, once `find` has run.
        self._found: Future[LiveSession] | None = None
        self._finding = threading.Lock()
        self.on_found: Callable[[LiveSession], None] | None = None
        # The journals the look for this session could not read, each with the sentence why.
        self.unreadable: dict[Path, str] = {}

    @classmethod
    def to_find(cls, store: MemoryStore, model: str | None = None) -> LiveSession:
        """The session `resume_or_start` picks, found later by `find` (in a thread, so that
        start-up does not wait for it): until then it is empty and makes and locks no file;
        whatever writes to it first waits for it to be found."""
        journal = Journal(store.sessions_dir / "(to be found)", "", "", model)
        live = cls(store, journal, HeldLock(journal.path))  # never acquired
        live._found = Future()
        return live

    def find(self) -> None:
        """Find the session `to_find` stands for (resumed or new); `ready` makes it this
        one. Runs once, whichever thread calls it first; a failure is raised by `ready`."""
        with self._finding:
            found = self._found
            if found is None or found.done():
                return
            try:
                found.set_result(LiveSession.resume_or_start(self.store, self._journal.model))
            except Exception as exc:
                found.set_exception(exc)

    @property
    def is_found(self) -> bool:
        return self._found is None

    def ready(self) -> bool:
        """Become the session found (finding it now if no thread has yet); True when this
        call made it so. Raises (OSError) if it cannot be found or made: the next call
        tries again."""
        if self._found is None:
            return False
        self.find()
        try:
            live = self._found.result()
        except Exception:
            self._found = Future()
            raise
        self._journal, self._lock = live.journal, live._lock
        self.unreadable = live.unreadable
        self._context_start, self._found = live._context_start, None
        if self.on_found is not None:
            self.on_found(self)
        return True

    @staticmethod
    def _lock_for(store: MemoryStore, journal: Journal) -> HeldLock:
        return HeldLock(store.layout.live_lock(journal.id))

    @property
    def private(self) -> bool:
        return self._journal.private

    @classmethod
    def start(
        cls, store: MemoryStore, model: str | None = None, *, private: bool = False
    ) -> LiveSession:
        journal = store.new_session(model, private=private)
        lock = cls._lock_for(store, journal)
        lock.acquire()  # a new id: no one else can hold it
        return cls(store, journal, lock)

    @classmethod
    def resume_or_start(cls, store: MemoryStore, model: str | None = None) -> LiveSession:
        """The newest active session no other Kept window has open (quitting never
        consolidates), or a new one; its `unreadable` names the journals that could not
        be read on the way."""
        scan = store.scan_active()
        # The one used last first: ids share a second's resolution, file times do not.
        for journal in sorted(scan.journals, key=_last_used, reverse=True):
            lock = cls._lock_for(store, journal)
            if not lock.acquire():
                continue
            if journal.private:
                # Its window ended without deleting it (a crash): it ends now.
                store.discard(journal)
                _forget_private(store)
                lock.release()
                continue
            live = cls(store, journal, lock)
            live.settle_queue()  # typed before Kept closed, never sent: part of the session
            live.unreadable = scan.unreadable
            return live
        live = cls.start(store, model)
        live.unreadable = scan.unreadable
        return live

    @classmethod
    def join_latest(cls, store: MemoryStore, model: str | None = None) -> LiveSession | None:
        """The session used last, to go on with from outside the app (`kept ask
        --continue`); None while a Kept window has it open (two writers would each miss
        the other's messages). With no active session, a new one."""
        active = [j for j in store.active_sessions() if not j.private]
        if not active:
            return cls.start(store, model)
        journal = max(active, key=_last_used)
        lock = cls._lock_for(store, journal)
        if not lock.acquire():
            return None
        live = cls(store, journal, lock)
        live.settle_queue()
        return live

    @classmethod
    def reopen(cls, store: MemoryStore, session_id: str) -> LiveSession | None:
        """Continue a past session as the live one: its journal comes back from done/ if
        it was there, and what is said next is a new segment, saved at the next /new.
        None while another Kept window has it open. Raises LookupError if it is gone."""
        import os

        from memory.data.files import fsync_dir

        lock = HeldLock(store.layout.live_lock(session_id))
        if not lock.acquire():
            return None
        try:
            journal = store.find_session(session_id)
            store.sessions.refuse_others(journal, "continue")
            if journal.path.parent == store.done_dir:
                os.chmod(journal.path, 0o600)
                target = store.sessions_dir / journal.path.name
                os.replace(journal.path, target)
                fsync_dir(store.done_dir)
                fsync_dir(store.sessions_dir)
                journal.path = target
            if journal.closed:
                journal.reopen()
        except BaseException:
            lock.release()
            raise
        live = cls(store, journal, lock)
        # What was said before goes on being part of the conversation, up to a window.
        live._context_start = max(0, len(journal.messages) - store.settings.session_keep_messages)
        return live

    def release(self) -> None:
        """Let another window resume this session (the process ending does it too)."""
        if self._found is not None:  # never found: nothing is held, nothing is made now
            with self._finding:
                if self._found.done() and self._found.exception() is None:
                    self._found.result().release()
            return
        self._lock.release()

    @property
    def journal(self) -> Journal:
        """The session's journal: asking for it before the session is found finds it now."""
        self.ready()
        return self._journal

    @property
    def id(self) -> str:
        return self.journal.id

    @property
    def messages(self) -> list[Message]:
        """What was said (nothing yet, before the session is found: never waits)."""
        return self._journal.messages

    def live_messages(self) -> list[Message]:
        messages = self._journal.messages
        if self._context_start is not None:
            return messages[self._context_start :]
        return messages[max(self._journal.compacted_through, self._dropped) :]

    def context(self) -> list[dict[str, Any]]:
        """The messages sent to the model, in OpenAI shape. A `system` message in the
        journal (an import from before they were left out, a hand edit) is not sent: the
        only system message is Kept's own prompt."""
        return [
            {k: v for k in CONTEXT_KEYS if (v := m.get(k)) is not None or k == "content"}
            for m in self.live_messages()
            if m.get("role") != "system"
        ]

    def append(self, message: Mapping[str, Any]) -> Message:
        return self.journal.append(message)

    def queue(self, text: str, pasted: list[list[int]] | None = None) -> Queued:
        """Journal a message typed while a reply is being written; `send_queued` makes it
        part of the conversation once that reply has ended. `pasted`: the spans of it that
        were pasted, not typed, sent with it."""
        return self.journal.queue(text, pasted)

    @property
    def queued(self) -> list[Queued]:
        return list(self._journal.queued)

    def send_queued(self) -> list[Message]:
        """Every queued message, appended in the order typed, after the reply they waited
        for: the user messages the next reply answers."""
        return [self.journal.append(_sent(q)) for q in list(self.journal.queued)]

    def settle_queue(self) -> list[Message]:
        """Queued messages that will not be sent by a reply's end (the session is closing,
        or Kept closed before) join the conversation as they are: nothing typed is lost."""
        if self._journal.closed or not self._journal.queued:
            return []
        return self.send_queued()

    def needs_compaction(self) -> bool:
        live = self.live_messages()
        settings = self.store.settings
        return (
            len(live) > settings.session_max_messages
            or estimate_tokens(live) > settings.session_max_tokens
        )

    def compact(self) -> Segment | None:
        """Queue the older part of the live window for consolidation and drop it from the
        context. The journal keeps every message; nothing leaves the disk."""
        if not self.needs_compaction():
            return None
        messages = self.journal.messages
        settings = self.store.settings
        start = max(self.journal.compacted_through, self._dropped)
        # Cut only where a user turn starts, so a tool call never loses its result.
        turns = [i for i in range(start + 1, len(messages)) if messages[i].get("role") == "user"]
        if not turns:
            return None
        wanted = len(messages) - settings.session_keep_messages
        # The first turn start that keeps at most `session_keep_messages` messages and half
        # the token budget; a few huge messages can leave only the last turn.
        end = next(
            (
                i
                for i in turns
                if i >= wanted and estimate_tokens(messages[i:]) <= settings.session_max_tokens // 2
            ),
            turns[-1],
        )
        if self.private:
            self._dropped = end
            return None
        self._context_start = None
        return self.journal.mark_pending(end)

    def after_turn(self) -> Segment | None:
        """What a finished turn leaves for memory: the older part of a window that has
        outgrown its limits, queued for consolidation (None when there is none). Memory
        decides when; the caller only saves what it is given."""
        return self.compact()

    def close(self) -> Segment | None:
        """End the session (/new): what is left is queued for consolidation; a private
        session's journal is deleted instead."""
        self.ready()  # a session not found yet is found, and ended, as it would have been
        if self.private:
            self.store.discard(self.journal)
            _forget_private(self.store)  # its attachments go with it
            self.release()
            return None
        self.settle_queue()
        segment = self.journal.mark_pending(close=True)
        if segment is None:
            self.store.settle(self.journal)
        self.release()
        return segment
