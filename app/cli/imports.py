"""`kept import --from chatgpt|claude|llm`, and what `kept consolidate` shows while it
works through many sessions: a dry run first, then progress, time left and cost so far."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from app.cli.errors import USAGE, CliError

if TYPE_CHECKING:
    from app.cli.context import Context
    from catalog import Catalog
    from memory import MemoryStore
    from memory.consolidation.run import Consolidation
    from memory.sessions.import_exports import ImportReport

NAMES = {"chatgpt": "ChatGPT", "claude": "Claude.ai", "llm": "llm"}


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    from pathlib import Path

    from memory.sessions.import_transcript import import_transcript

    path = Path(args.file)
    if not path.exists() or path.is_dir():
        said = f"{args.file} is a folder: name the file in it" if path.exists() else ""
        raise CliError(f"kept import: {said or f'no file at {args.file}'}.", USAGE)
    _, store, _ = ctx.checked()
    if args.source != "jsonl":
        code = cmd_import_export(args, store)
        _count_pending(store)
        return code
    try:
        journal, warnings = import_transcript(store, args.file)
    except (OSError, ValueError) as exc:
        raise CliError(f"kept import: {exc}", USAGE) from None
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(journal.id)
    return 0


def _count_pending(store: MemoryStore) -> None:
    """Read what an import left pending into index.pending.json now, while the import is
    waited for anyway (10,000 journals: a few seconds beside a minute), so that the `kept
    consolidate --dry-run` that follows answers at once."""
    import contextlib

    from memory.sessions.pending import pending

    with contextlib.suppress(OSError):
        pending(store)


def cmd_import_export(args: argparse.Namespace, store: MemoryStore) -> int:
    """0 when every conversation was imported (or was already), 1 when some could not be,
    2 when the export cannot be read at all."""
    from pathlib import Path

    from memory.sessions.import_exports import Source, export_source, import_export, suggestion

    source = Source(args.source)
    found = export_source(Path(args.file))
    if found is not None and found is not source:
        raise CliError(f"kept import: {suggestion(Path(args.file), found)}", USAGE)
    tty = sys.stderr.isatty()

    def progress(report: ImportReport) -> None:
        if tty:
            done = report.imported + report.already + report.empty + len(report.damaged or [])
            print(
                f"\r  {done:,} conversations read, {report.imported:,} imported",
                end="",
                file=sys.stderr,
                flush=True,
            )

    try:
        report = import_export(store, source, args.file, on_progress=progress)
    except OSError as exc:
        raise CliError(
            f"kept import: {exc.filename or args.file}: {exc.strerror or exc}", USAGE
        ) from None
    if tty:
        print(file=sys.stderr)
    for damaged in report.damaged or []:
        print(
            f"kept import: {args.file}: {damaged.where} was not imported: {damaged.reason}.",
            file=sys.stderr,
        )
    if report.stopped:
        print(
            f"kept import: {report.stopped} Every conversation before it is imported; "
            "importing the file again skips them.",
            file=sys.stderr,
        )
    nothing = not (report.imported or report.already or report.empty)
    if report.stopped and nothing:
        return 2
    print(
        f"Imported {report.imported:,} {NAMES[source]} conversations "
        f"({report.messages:,} messages) as pending sessions."
    )
    if report.already:
        print(f"{report.already:,} were imported before and were skipped.")
    if report.empty:
        print(f"{report.empty:,} held no message with text.")
    if report.imported:
        print(
            "`kept consolidate --dry-run` says what saving them to memory would cost; "
            "`kept consolidate` does it, oldest first."
        )
    return 1 if report.damaged or report.stopped else 0


def cmd_dry_run(store: MemoryStore, catalog: Catalog, chat_model: str) -> int:
    from memory.consolidation.estimate import estimate_pending

    estimate = estimate_pending(store, catalog, chat_model)
    if not estimate.sessions:
        print("Nothing to consolidate: no session is pending.")
        return 0
    print(f"{estimate.sessions:,} sessions ({estimate.messages:,} messages) are pending.")
    tokens = f"{estimate.input_tokens:,} tokens in, {estimate.output_tokens:,} out"
    if estimate.model is None:
        print(
            f"Estimated: {tokens}; but no model can save memory now: add a key with "
            "`keyring set kept <gateway>`, or set up a local server."
        )
        return 1
    cost = f"${estimate.cost:.2f}" if estimate.cost is not None else "an unknown cost"
    print(
        f"Estimated: {tokens}, {cost} with {estimate.model} (a rough figure: about 4 "
        "characters a token)."
    )
    print("`kept consolidate` saves them, oldest first; Ctrl+C stops it and the next run goes on.")
    return 0


class Progress:
    """Sessions done of total, time left and cost so far, on one line (on a terminal)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.cost = 0.0
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()

    def __call__(self, result: Consolidation) -> None:
        self.done += 1
        self.cost += result.cost
        if self.total < 2:
            return
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        width = 24
        filled = round(width * self.done / self.total)
        bar = "█" * filled + "·" * (width - filled)
        line = (
            f"[{bar}] {self.done:,}/{self.total:,} sessions · {_duration(left)} left · "
            f"${self.cost:.4f} so far"
        )
        print(line, file=sys.stderr, flush=True)

    def interrupted(self) -> str:
        return (
            f"Stopped after {self.done:,} of {self.total:,} sessions; nothing is lost: "
            "`kept consolidate` goes on from there."
        )


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    imp = sub.add_parser(
        "import",
        help="turn a transcript (journal format), or another tool's export, into pending sessions",
    )
    imp.add_argument(
        "file",
        help="a .jsonl transcript (one message per line; prints the "
        "session id), ChatGPT's or Claude.ai's conversations.json, llm's logs.db",
    )
    imp.add_argument(
        "--from",
        dest="source",
        default="jsonl",
        choices=("jsonl", "chatgpt", "claude", "llm"),
        help="what the file is (default: a Kept journal, jsonl)",
    )
    imp.set_defaults(func=cmd_import)
