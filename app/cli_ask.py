"""`kept ask`: one question from the shell, answered by the same memory and catalog code as
the chat, streamed to stdout; the exchange is a session like any other."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog import Attempt, Catalog
    from memory import LiveSession, MemoryStore

USAGE, NO_ANSWER = 2, 1


def _question(parts: list[str]) -> str:
    """The words given, with `-` standing for what arrives on stdin."""
    pieces = []
    for part in parts:
        if part == "-":
            if sys.stdin is None or sys.stdin.isatty():
                raise ValueError(
                    "`-` reads the question from stdin, but nothing is piped "
                    "in: `echo text | kept ask -`"
                )
            pieces.append(sys.stdin.read())
        else:
            pieces.append(part)
    return "\n\n".join(p.strip() for p in pieces if p.strip())


class Output:
    """Streamed text: as it comes when piped; on a terminal, Markdown rendered live."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.text = ""
        self.first: float | None = None  # when the first piece arrived (time.monotonic)
        self._live = None
        if self.tty:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                console=Console(),
                auto_refresh=True,
                refresh_per_second=12,
                vertical_overflow="visible",
            )
            self._live.start()

    def feed(self, piece: str) -> None:
        if self.first is None:
            self.first = time.monotonic()
        self.text += piece
        if self._live is not None:
            from rich.markdown import Markdown

            from memory.sanitize import clean_text

            self._live.update(Markdown(clean_text(self.text)))
        else:
            sys.stdout.write(piece)
            sys.stdout.flush()

    def restart(self, why: str) -> None:
        """A model failed after some of its reply was written: the next one starts again."""
        if self.text and self._live is None:
            sys.stdout.write("\n")
            print(f"kept ask: {why}; the reply starts again below.", file=sys.stderr)
        self.text = ""

    def close(self, final: str | None) -> None:
        if self._live is not None:
            if final is not None:
                from rich.markdown import Markdown

                self._live.update(Markdown(final))
            self._live.stop()
        elif self.text:
            sys.stdout.write("\n" if not self.text.endswith("\n") else "")
            sys.stdout.flush()


def _session(store: MemoryStore, model: str, args: argparse.Namespace) -> LiveSession | None:
    from memory import LiveSession

    if args.continue_:
        return LiveSession.join_latest(store, model)
    return LiveSession.start(store, model, private=args.private)


def save_in_background(session_id: str) -> None:
    """Consolidate the finished exchange in a process of its own, so the shell gets its
    prompt back at once; if it cannot, the session stays pending and is saved later."""
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "app.cli", "consolidate", session_id],
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


def cmd_ask(args: argparse.Namespace) -> int:
    """0 answered, 1 no model answered, 2 usage."""
    import asyncio

    from app.cli import _memory_context
    from catalog import UnknownModelError

    try:
        question = _question(args.question)
    except ValueError as exc:
        print(f"kept ask: {exc}", file=sys.stderr)
        return USAGE
    if not question:
        print(
            'kept ask: the question is empty: `kept ask "question"` or `echo text | kept ask -`',
            file=sys.stderr,
        )
        return USAGE
    if args.private and args.continue_:
        print(
            "kept ask: --private starts a session of its own; it cannot --continue one.",
            file=sys.stderr,
        )
        return USAGE
    catalog, store, settings = _memory_context()
    model = args.model or settings.app.model
    try:
        catalog.get(model)
    except UnknownModelError as exc:
        print(f"kept ask: {exc}", file=sys.stderr)
        return USAGE
    session = _session(store, model, args)
    if session is None:
        print(
            "kept ask: the live session is open in a Kept window; ask there, or without "
            "--continue.",
            file=sys.stderr,
        )
        return USAGE
    try:
        return asyncio.run(_ask(session, catalog, model, question, args))
    except KeyboardInterrupt:
        # The reply was cancelled; what was shown of it is in the journal.
        print(
            "\nkept ask: cancelled; the question (and what was shown of the reply) is "
            f"kept in session {session.id}.",
            file=sys.stderr,
        )
        return 130
    finally:
        session.release()


async def _ask(
    session: LiveSession, catalog: Catalog, model: str, question: str, args: argparse.Namespace
) -> int:
    from catalog import Outcome
    from memory.assistant import answer

    session.append({"role": "user", "content": question})
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
    if not args.continue_:
        segment = session.close()  # a private session's journal is deleted here
        if segment is not None and not args.no_save:
            save_in_background(session.id)
    if turn.cut_off:  # what arrived is above, and in the journal marked as cut off
        print(
            f"\nkept ask: the reply was cut off ({turn.reason.rstrip('.')}); what arrived "
            f"is kept in session {session.id}.",
            file=sys.stderr,
        )
        return NO_ANSWER
    if not turn.ok:
        print(
            f"kept ask: no model could answer. {turn.reason.rstrip('.')}. Your question is "
            f"saved in session {session.id}.",
            file=sys.stderr,
        )
        return NO_ANSWER
    return 0


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
        "--continue",
        dest="continue_",
        action="store_true",
        help="add the exchange to the live session instead of a new one",
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
