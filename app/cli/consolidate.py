"""`kept consolidate`: save pending sessions into memory now, each one's attempts and
outcome said as soon as it is done."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from app.cli.errors import USAGE, CliError, os_error

if TYPE_CHECKING:
    from app.cli.context import Context
    from catalog import Attempt
    from memory import Consolidation, MemoryStore


def describe_attempt(attempt: Attempt) -> str:
    """One line per attempt, e.g. `qwen3-32b → did not call save_memory`."""
    from catalog import Outcome

    if attempt.outcome is Outcome.OK:
        return f"{attempt.model} ✓ {attempt.latency:.1f} s ${attempt.cost:.4f}"
    suffix = {Outcome.RETRIED: " (retrying)", Outcome.SKIPPED: " (skipped)"}.get(
        attempt.outcome, ""
    )
    return f"{attempt.model} → {attempt.reason}{suffix}"


def outcome(store: MemoryStore, result: Consolidation) -> str:
    """What became of one session, in one or two sentences."""
    from app.words.consolidation import next_step
    from memory.consolidation.outcome import Status

    session = f"Session {result.session}"
    match result.status:
        case Status.PROPOSED | Status.AWAITING_REVIEW:
            return (
                f"{session}: a memory change is proposed and waits for "
                "your review (`kept memory review`)."
            )
        case Status.SAVED | Status.SAVED_BEFORE:
            by = f" by {result.model}" if result.model else ""
            return f"{session}: saved{by} ({result.elapsed:.1f} s, ${result.cost:.4f})."
        case Status.TOO_LONG:
            return (
                f"{session}: not saved yet, nothing lost: "
                f"{result.estimate} with `kept consolidate --yes {result.session}`."
            )
        case Status.BUSY | Status.FAILED:
            step = next_step(result.cause, shell=True)
            return (
                f"{session}: still pending, nothing lost. "
                f"{result.reason.rstrip('.')}.{_when(store, result)}" + (f" {step}" if step else "")
            )


def _when(store: MemoryStore, result: Consolidation) -> str:
    """When a session still pending is tried again, or that it waits to be tried by hand."""
    from memory import next_retry
    from memory.consolidation.schedule import held, retry_note

    if not result.segment:
        return ""
    journal = store.find_session(result.session)
    if held(journal, result.segment):
        return (
            " Every model refused it several times in a row, so the app no longer "
            "retries it on its own; `kept consolidate` tries again."
        )
    if next_retry(journal, result.segment):
        return f" {retry_note(journal, result.segment).capitalize()}."
    return ""


def cmd_consolidate(args: argparse.Namespace, ctx: Context) -> int:
    import asyncio

    from app.cli.imports import Progress, cmd_dry_run
    from memory import consolidate_pending
    from memory.consolidation.estimate import ASK_ABOVE_PARTS
    from memory.consolidation.outcome import Status

    catalog, store, settings = ctx.checked()
    if args.dry_run:
        return cmd_dry_run(store, catalog, settings.app.model)
    progress = Progress(
        len(args.ids) if args.ids else sum(len(j.pending) for j in store.pending_sessions())
    )

    def report(result: Consolidation) -> None:
        """Each session's attempts, then what became of it, as soon as it is done."""
        for attempt in result.attempts:
            print(f"  {describe_attempt(attempt)}")
        print(outcome(store, result), flush=True)
        progress(result)

    try:
        store.ensure()  # a folder Kept may not write: said once, before any request
        results = asyncio.run(
            consolidate_pending(
                store,
                catalog,
                args.ids or None,
                chat_model=settings.app.model,
                max_parts=None if args.yes else ASK_ABOVE_PARTS,
                on_result=report,
            )
        )
    except KeyboardInterrupt:
        raise CliError(f"\n{progress.interrupted()}", 130) from None
    except LookupError as exc:
        raise CliError(f"kept consolidate: {exc}", USAGE) from None
    except OSError as exc:
        raise CliError(
            f"kept consolidate: {os_error(exc)}; nothing was lost, and pending sessions "
            "stay pending.",
            USAGE,
        ) from None
    from memory.sessions.pending import scan_pending

    for sentence in scan_pending(store).unreadable.values():  # read from the cache it keeps
        print(f"warning: {sentence}", file=sys.stderr)
    if not results:
        print("Nothing to consolidate: no session is pending.")
        return 0
    still_pending = {Status.TOO_LONG, Status.BUSY, Status.FAILED}
    return 1 if any(r.status in still_pending for r in results) else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cons = sub.add_parser("consolidate", help="save pending sessions into memory now")
    cons.add_argument("ids", nargs="*", metavar="ID", help="session ids (default: all pending)")
    cons.add_argument(
        "--yes",
        action="store_true",
        help="go ahead with sessions that need many requests (the estimate is shown without it)",
    )
    cons.add_argument(
        "--dry-run",
        action="store_true",
        help="say how many sessions and messages are pending and the estimated cost; save nothing",
    )
    cons.set_defaults(func=cmd_consolidate)
