"""`kept ask`: one question from the shell, answered by the same memory and catalog code as
the chat, streamed to stdout; the exchange is a session like any other."""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.cli.errors import FAILED, CliError

if TYPE_CHECKING:
    from app.cli.ask_io import Question
    from app.cli.context import Context
    from catalog import Attempt, Catalog
    from memory import LiveSession, MemoryStore
    from memory.chat.attachments import Attachment

NO_ANSWER = FAILED
LAST_ASK = "last-ask"  # in the data folder: the session `kept ask --continue` goes on with


def last_ask(store: MemoryStore) -> str | None:
    """The session of the last `kept ask` (None when there was none, or it is unreadable)."""
    from memory.data.files import read_text

    try:
        found = read_text(store.layout.local_dir / LAST_ASK)[0].strip()
    except OSError:
        return None
    return found if re.fullmatch(r"[0-9]{8}-[0-9]{6}-[0-9a-f]+", found) else None


def _remember_ask(store: MemoryStore, session_id: str) -> None:
    from memory.data.files import atomic_write

    try:
        store.layout.local_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(store.layout.local_dir / LAST_ASK, session_id + "\n")
    except OSError as exc:  # only --continue needs it; the exchange itself is safe
        print(
            f"kept ask: {exc.strerror or exc}; `kept ask --continue` will not find this "
            "conversation.",
            file=sys.stderr,
        )


def _session(store: MemoryStore, model: str, args: argparse.Namespace) -> LiveSession | None:
    """A new session, or with --continue the last `kept ask` conversation reopened (None
    while a Kept window has it open)."""
    from memory import LiveSession

    if not args.continue_:
        return LiveSession.start(store, model, private=args.private)
    previous = last_ask(store)
    if previous is not None:
        try:
            return LiveSession.reopen(store, previous)
        except LookupError:
            pass  # its transcript was deleted
    print(
        "kept ask: there is no earlier `kept ask` to continue; this is a new one.", file=sys.stderr
    )
    return LiveSession.start(store, model)


def save_in_background(session_id: str) -> None:
    """Consolidate the finished exchange in a process of its own, so the shell gets its
    prompt back at once; if it cannot, the session stays pending and is saved later."""
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "app.cli.main", "consolidate", session_id],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:  # pending, nothing lost: the next start of Kept saves it
        print(
            f"kept ask: memory is saved later ({exc.strerror}); `kept consolidate` saves it now.",
            file=sys.stderr,
        )


def _question(args: argparse.Namespace) -> Question:
    """The question asked, once the arguments are known to agree; CliError if they do not."""
    from app.cli.ask_io import read_question

    if "-" in args.question and "-" in (args.attach or ()):
        raise CliError("kept ask: stdin is read once: `-` as the question or `-a -`, not both.")
    try:
        question = read_question(args.question)
    except ValueError as exc:
        raise CliError(f"kept ask: {exc}") from None
    if not question.text:
        raise CliError(
            'kept ask: the question is empty: `kept ask "question"` or `echo text | kept ask -`'
        )
    if args.private and args.continue_:
        raise CliError("kept ask: --private starts a session of its own; it cannot --continue one.")
    return question


def _attachments(
    args: argparse.Namespace, ctx: Context, model: str, question: str
) -> list[Attachment]:
    """The files attached with -a, read, and known to fit and suit `model`."""
    from app.cli.ask_io import cannot_send, read_attachments
    from memory.chat.attachments import AttachmentError

    try:
        attachments = read_attachments(args.attach or [], ctx.settings.memory.attachments)
    except AttachmentError as exc:
        raise CliError(f"kept ask: {exc}") from None
    refused = cannot_send(ctx.catalog, model, attachments, question)
    if refused is not None:
        raise CliError(f"kept ask: {refused}")
    return attachments


def cmd_ask(args: argparse.Namespace, ctx: Context) -> int:
    """0 answered, 1 no model answered, 2 usage."""
    import asyncio

    from app.cli.ask_failure import untriable
    from catalog import UnknownModelError

    question = _question(args)
    catalog, store, settings = ctx.checked()
    model = args.model or settings.app.model
    try:
        catalog.get(model)
    except UnknownModelError as exc:
        raise CliError(f"kept ask: {exc}") from None
    attachments = _attachments(args, ctx, model, question.text)
    blocked = untriable(catalog, model)
    if blocked is not None:
        raise CliError(blocked.sentences(catalog, model, "Nothing was saved."), NO_ANSWER)
    session = _session(store, model, args)
    if session is None:
        raise CliError(
            f"kept ask: your last ask (session {last_ask(store)}) is open in a Kept window; "
            "go on there, or ask without --continue."
        )
    restore = _stop_on_signals() if session.private else {}
    try:
        return asyncio.run(_ask(session, catalog, model, question, args, attachments))
    except KeyboardInterrupt:
        if session.private:
            return _private_stopped(session, signal.SIGINT)
        # The reply was cancelled; what was shown of it is in the journal.
        raise CliError(
            "\nkept ask: cancelled; the question (and what was shown of the reply) is "
            f"kept in session {session.id}.",
            130,
        ) from None
    except _Stopped as stopped:
        return _private_stopped(session, stopped.signum)
    finally:
        for signum, handler in restore.items():
            signal.signal(signum, handler)
        session.release()
        if session.private and attachments:
            from memory.chat.attachments import collect

            collect(store, grace=0, private_only=True)  # its files go with its journal


class _Stopped(BaseException):
    """SIGTERM or SIGHUP (a logout, a closed terminal) during a private ask."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop_on_signals() -> dict[int, Any]:
    """Make SIGTERM and SIGHUP stop a private ask as Ctrl+C does, so that its journal is
    deleted rather than left behind; the handlers they replace, to put back."""

    def stop(signum: int, frame: object) -> None:
        raise _Stopped(signum)

    return {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGHUP)}


def _private_stopped(session: LiveSession, signum: int) -> int:
    """A private ask stopped by a signal: its journal is deleted first, then said (the
    terminal may be gone: nothing said is lost)."""
    try:
        session.store.discard(session.journal)
        said = "its journal is deleted, nothing of it is kept"
    except OSError as exc:
        said = (
            f"its journal could not be deleted yet ({exc.strerror or exc}); the next "
            "start of Kept deletes it"
        )
    session.release()
    how = "cancelled" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    with contextlib.suppress(OSError):
        print(f"\nkept ask: {how}; the question was private: {said}.", file=sys.stderr)
    return 128 + signum


def _answered(session: LiveSession) -> bool:
    return any(m.get("role") == "assistant" and m.get("content") for m in session.messages)


def _forget(session: LiveSession) -> bool:
    """Delete a session no model answered: there is nothing in it to remember, and the
    question is in the user's shell. False (it is kept) if it cannot be deleted."""
    from memory.sessions.delete import delete_session

    session.release()
    try:
        delete_session(session.store, session.id)
    except (OSError, ValueError, LookupError):
        return False
    return True


async def _ask(
    session: LiveSession,
    catalog: Catalog,
    model: str,
    question: Question,
    args: argparse.Namespace,
    attachments: Sequence[Attachment] = (),
) -> int:
    from app.cli.ask_failure import from_attempts
    from app.cli.ask_io import Output
    from catalog import Outcome
    from memory.chat.attachments import keep
    from memory.chat.turn import answer

    message: dict[str, Any] = {"role": "user", "content": question.text}
    if question.pasted:
        message["pasted"] = question.pasted
    if attachments:
        message["attachments"] = [
            keep(session.store, a, private=session.private) for a in attachments
        ]
    session.append(message)
    output = Output()

    def on_attempt(attempt: Attempt) -> None:
        if attempt.outcome not in (Outcome.OK, Outcome.SKIPPED):
            output.restart(f"{attempt.model}: {attempt.reason}")

    started = time.monotonic()
    try:
        turn = await answer(session, catalog, model, on_delta=output.feed, on_attempt=on_attempt)
    except BaseException:
        output.close(None)
        raise
    output.close(turn.text if turn.ok or turn.cut_off else None)
    if args.timing and output.first is not None:
        print(f"kept ask: first token after {output.first - started:.3f} s", file=sys.stderr)
    if turn.fell_back:
        print(f"kept ask: answered by {turn.model} instead of {model}.", file=sys.stderr)
    kept = _close(session, save=not args.no_save)
    if turn.cut_off:  # what arrived is above, and in the journal marked as cut off
        where = (
            "was private: it is not kept" if session.private else f"is kept in session {session.id}"
        )
        raise CliError(
            f"\nkept ask: the reply was cut off ({turn.reason.rstrip('.')}); what arrived {where}.",
            NO_ANSWER,
        )
    if not turn.ok:
        raise CliError(
            from_attempts(catalog, turn.attempts).sentences(catalog, model, kept), NO_ANSWER
        )
    return 0


def _close(session: LiveSession, *, save: bool) -> str:
    """Close the exchange: deleted if no model answered, else kept (and saved to memory in
    the background with `save`); what became of the question, in one sentence."""
    if not _answered(session) and not session.private and _forget(session):
        return "Nothing was saved."
    if not session.private:
        _remember_ask(session.store, session.id)
    segment = session.close()  # a private session's journal is deleted here
    if segment is not None and save:
        save_in_background(session.id)
    if session.private:
        return "The question was private: nothing of it is kept."
    return f"Your question is kept in session {session.id}."


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ask = sub.add_parser(
        "ask",
        help="ask one question from the shell; the answer streams "
        "to stdout, with MEMORY.md in the prompt",
    )
    ask.add_argument(
        "question",
        nargs="+",
        help="the question; `-` reads it from stdin (both: stdin's text, then the words)",
    )
    ask.add_argument("-m", "--model", help="the model to ask (default: the chat model)")
    ask.add_argument(
        "-a",
        "--attach",
        action="append",
        metavar="PATH",
        help="attach a file: text, a PDF or an image (repeatable; `-` for stdin)",
    )
    ask.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="go on with the conversation of your last `kept ask`",
    )
    ask.add_argument(
        "--private",
        action="store_true",
        help="off the record: never saved to memory, its journal deleted",
    )
    ask.add_argument(
        "--no-save",
        action="store_true",
        help="leave the session pending "
        "instead of saving it to memory now (`kept consolidate` saves it)",
    )
    ask.add_argument(
        "--timing", action="store_true", help="print the time to the first token on stderr"
    )
    ask.set_defaults(func=cmd_ask)
