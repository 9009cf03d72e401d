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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog import Attempt, Catalog
    from catalog.gateways import Gateway
    from memory import LiveSession, MemoryStore
    from memory.chat.attachments import Attachment
    from memory.settings import AttachmentLimits

USAGE, NO_ANSWER = 2, 1
LAST_ASK = "last-ask"  # in the data folder: the session `kept ask --continue` goes on with


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
            pieces.append(_stdin_text())
        else:
            pieces.append(part)
    return "\n\n".join(p.strip() for p in pieces if p.strip())


def _attachments(paths: list[str], limits: AttachmentLimits) -> list[Attachment]:
    """Each `-a PATH` read and measured (`-` is stdin); raises AttachmentError."""
    from pathlib import Path

    from memory.chat.attachments import AttachmentError, read_attachment, read_stdin_bytes

    found = []
    for path in paths:
        if path != "-":
            found.append(read_attachment(Path(path).expanduser(), limits))
            continue
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None or sys.stdin.isatty():
            raise AttachmentError(
                "`-a -` attaches what is piped in, but nothing is: `cat file | kept ask -a - …`."
            )
        # One byte past the largest limit is enough to refuse it: a pipe may never end.
        found.append(read_stdin_bytes(bytes(stream.read(limits.largest + 1)), "stdin", limits))
    return found


def _cannot_send(
    catalog: Catalog, model: str, attachments: list[Attachment], question: str
) -> str | None:
    """Why the attachments cannot go to `model`: past its window, or an image it cannot see."""
    from memory.chat.attachments import can_take, does_not_fit, vision_model_sentence

    if not attachments:
        return None
    pricing = catalog.pricing(catalog.get(model))
    if pricing is not None and pricing.context_window:
        too_big = does_not_fit(attachments, question, pricing.context_window)
        if too_big is not None:
            return too_big.replace("/model", "-m MODEL")
    if not can_take(model, {a.kind for a in attachments}, catalog):
        return vision_model_sentence(catalog, model).replace("/model ", "-m ")
    return None


def _stdin_text() -> str:
    """What is piped in, as bytes decoded from UTF-8: a byte that is not (a Latin-1 file in
    a `git diff`) becomes U+FFFD rather than a traceback."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream with no bytes beneath it
        return sys.stdin.read()
    data = bytes(stream.read())
    text = data.decode("utf-8", errors="replace")
    if "\ufffd" in text and "\ufffd".encode() not in data:
        print(
            "kept ask: stdin is not all UTF-8; the bytes that are not were replaced by �.",
            file=sys.stderr,
        )
    return text


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


def last_ask(store: MemoryStore) -> str | None:
    """The session of the last `kept ask` (None when there was none, or it is unreadable)."""
    from memory.data.files import read_text

    try:
        found = read_text(store.root / LAST_ASK)[0].strip()
    except OSError:
        return None
    return found if re.fullmatch(r"[0-9]{8}-[0-9]{6}-[0-9a-f]+", found) else None


def _remember_ask(store: MemoryStore, session_id: str) -> None:
    from memory.data.files import atomic_write

    try:
        atomic_write(store.root / LAST_ASK, session_id + "\n")
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


@dataclass
class Failure:
    """Why no model answered, gathered for one shell message: gateways without a key,
    keys refused, local servers not listening, and anything else, each named once."""

    no_key: list[Gateway] = field(default_factory=list)
    bad_key: list[Gateway] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    def add(self, group: list[Any], item: object) -> None:
        if item not in group:
            group.append(item)

    def sentences(self, catalog: Catalog, model: str, kept: str) -> str:
        """Why, the shell's next step, and what became of the question: three sentences."""
        why = []
        if self.no_key:
            why.append(f"no key for {_or([g.label for g in self.no_key])}")
        if self.bad_key:
            why.append(f"the {_or([g.label for g in self.bad_key])} key was refused")
        if self.servers:
            why.append(f"nothing is listening at {_or(self.servers)}")
        why += self.other[:2]
        gateway = catalog.gateway_of(catalog.get(model))
        keys = [*self.bad_key, *self.no_key]
        if self.servers and (not gateway.needs_key or not keys):
            server = gateway.base_url if gateway.base_url in self.servers else self.servers[0]
            where = "there" if len(self.servers) == 1 else f"at {server}"
            step = f"Start your local server {where}, then ask again."
        elif keys:
            named = gateway if gateway in keys else keys[0]
            env = f" (or set {named.env_var})" if named.env_var else ""
            step = f"Store a key with `keyring set kept {named.name}`{env}, then ask again."
        else:
            step = "Ask again in a moment, or ask another model with -m."
        return (
            f"kept ask: no model could answer ({'; '.join(why) or 'none was tried'}). {step} {kept}"
        )


def _or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _refused(url: str | None, timeout: float = 2.0) -> bool:
    """Whether nothing listens at a server's address: the connection is refused at once (a
    slow server is not refused; the walk waits for it)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url or "")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False
    if not parts.hostname:
        return False
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return False
    except (ConnectionRefusedError, socket.gaierror):
        return True
    except OSError:
        return False


def untriable(catalog: Catalog, model: str) -> Failure | None:
    """Why no model of the chain can even be asked (no key, and no local server listening),
    or None when one can: said at once, rather than after a walk's retries and backoff."""
    failure = Failure()
    for entry in catalog.chain(model).models:
        route = catalog.route(entry)
        if route.gateway.needs_key:
            if route.key.usable:
                return None
            failure.add(failure.no_key, route.gateway)
        elif not route.key.usable:  # a broken [gateways.X] table in config.toml
            failure.add(failure.other, (route.problem or "").rstrip("."))
        elif _refused(route.api_base):
            failure.add(failure.servers, route.api_base)
        else:
            return None
    return failure


def _from_attempts(catalog: Catalog, attempts: list[Attempt]) -> Failure:
    """What each model's last attempt says, grouped, in the shell's words."""
    from catalog import Kind

    last: dict[str, Attempt] = {}
    for record in attempts:
        last[record.model] = record
    failure = Failure()
    for record in last.values():
        gateway = catalog.gateways.get(record.gateway)
        if gateway is not None and record.kind is Kind.NO_KEY:
            failure.add(failure.no_key, gateway)
        elif gateway is not None and record.kind is Kind.AUTH:
            failure.add(failure.bad_key, gateway)
        elif gateway is not None and record.kind is Kind.CONNECTION and not gateway.needs_key:
            failure.add(failure.servers, gateway.base_url)
        else:
            reason = record.reason.replace(": check it with /keys", "").rstrip(".")
            failure.add(failure.other, f"{record.model}: {reason}"[:90])
    return failure


def cmd_ask(args: argparse.Namespace) -> int:
    """0 answered, 1 no model answered, 2 usage."""
    import asyncio

    from app.cli.main import _memory_context
    from catalog import UnknownModelError

    if "-" in args.question and "-" in (args.attach or ()):
        print(
            "kept ask: stdin is read once: `-` as the question or `-a -`, not both.",
            file=sys.stderr,
        )
        return USAGE
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
    from memory.chat.attachments import AttachmentError

    try:
        attachments = _attachments(args.attach or [], settings.memory.attachments)
    except AttachmentError as exc:
        print(f"kept ask: {exc}", file=sys.stderr)
        return USAGE
    refused = _cannot_send(catalog, model, attachments, question)
    if refused is not None:
        print(f"kept ask: {refused}", file=sys.stderr)
        return USAGE
    blocked = untriable(catalog, model)
    if blocked is not None:
        print(blocked.sentences(catalog, model, "Nothing was saved."), file=sys.stderr)
        return NO_ANSWER
    session = _session(store, model, args)
    if session is None:
        print(
            f"kept ask: your last ask (session {last_ask(store)}) is open in a Kept window; "
            "go on there, or ask without --continue.",
            file=sys.stderr,
        )
        return USAGE
    restore = _stop_on_signals() if session.private else {}
    try:
        return asyncio.run(_ask(session, catalog, model, question, args, attachments))
    except KeyboardInterrupt:
        if session.private:
            return _private_stopped(session, signal.SIGINT)
        # The reply was cancelled; what was shown of it is in the journal.
        print(
            "\nkept ask: cancelled; the question (and what was shown of the reply) is "
            f"kept in session {session.id}.",
            file=sys.stderr,
        )
        return 130
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
    from memory.sessions.browse import delete_session

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
    question: str,
    args: argparse.Namespace,
    attachments: Sequence[Attachment] = (),
) -> int:
    from catalog import Outcome
    from memory.chat.attachments import keep
    from memory.chat.turn import answer

    message: dict[str, Any] = {"role": "user", "content": question}
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
    if not _answered(session) and not session.private and _forget(session):
        kept = "Nothing was saved."
    else:
        if not session.private:
            _remember_ask(session.store, session.id)
        segment = session.close()  # a private session's journal is deleted here
        if segment is not None and not args.no_save:
            save_in_background(session.id)
        kept = (
            "The question was private: nothing of it is kept."
            if session.private
            else f"Your question is kept in session {session.id}."
        )
    if turn.cut_off:  # what arrived is above, and in the journal marked as cut off
        where = (
            "was private: it is not kept" if session.private else f"is kept in session {session.id}"
        )
        print(
            f"\nkept ask: the reply was cut off ({turn.reason.rstrip('.')}); what arrived {where}.",
            file=sys.stderr,
        )
        return NO_ANSWER
    if not turn.ok:
        print(
            _from_attempts(catalog, turn.attempts).sentences(catalog, model, kept), file=sys.stderr
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
