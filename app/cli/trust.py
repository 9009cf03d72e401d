"""`kept memory blame|undo|review|tidy|trust`: where memory came from, changes you decide
on, and which models' changes wait for you."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from app.cli.errors import FAILED, USAGE, CliError

if TYPE_CHECKING:
    from app.cli.context import Context
    from memory import MemoryStore
    from memory.consolidation.review import Proposal


def cmd_blame(args: argparse.Namespace, ctx: Context) -> int:
    """MEMORY.md, each line with the version, date, session and model that last wrote it."""
    from memory.recall.provenance import blame
    from memory.sanitize import clean_text

    store = ctx.store
    lines = blame(store)
    if not lines:
        print(
            f"MEMORY.md is empty: nothing has been saved yet ({store.memory_path}).",
            file=sys.stderr,
        )
        return 0
    from memory.data.versions import VersionKind

    # With more than one device, each line also says which device it came from.
    devices = len(store.layout.devices()) > 1
    rows = []
    for line in lines:
        version = line.version
        if version is None:
            row = ["-", "", "edited by you (not yet versioned)", "", line.text]
            rows.append([store.device, *row] if devices else row)
            continue
        synced = version.kind is VersionKind.SYNCED
        device = (version.via or "another device") if synced else store.device
        row = [
            f"v{version.number}",
            version.time[:16].replace("T", " "),
            version.session or version.source,
            version.model or "",
            line.text,
        ]
        rows.append([device, *row] if devices else row)
    columns = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(columns)]
    colour = sys.stdout.isatty()
    for row in rows:
        cells = zip(row[:columns], widths, strict=True)
        head = "  ".join(cell.ljust(width) for cell, width in cells)
        text = clean_text(row[-1]) if colour else row[-1]
        print(f"{head} │ {text}")
    return 0


def cmd_undo(args: argparse.Namespace, ctx: Context) -> int:
    from app.words.memory import not_written

    try:
        number = ctx.store.undo(args.number)
    except (LookupError, ValueError) as exc:
        raise CliError(f"kept memory undo: {not_written(exc, shell=True)}", USAGE) from None
    print(
        f"Version {args.number} undone: MEMORY.md is as it was before it (saved as "
        f"version {number}). The history entry stays."
    )
    return 0


def _ask(question: str) -> bool:
    """A yes/no question on a terminal; anything but y/yes is no."""
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def cmd_review(args: argparse.Namespace, ctx: Context) -> int:
    """Proposed changes (review = "before"): show them, or accept or reject one session's.
    Each is listed with the user's words each line stands on and the edits not kept."""
    from app.words.evidence import why_text
    from memory.consolidation.review import proposals, unified

    store = ctx.store
    problems: list[str] = []
    waiting = proposals(store, problems)
    for problem in problems:  # a proposal file edited past what Kept writes: set aside
        print(f"kept memory review: {problem}", file=sys.stderr)
    chosen = args.accept or args.reject
    if chosen:
        mine = [p for p in waiting if p.session == chosen]
        if not mine:
            raise CliError(
                f"kept memory review: no change of session '{chosen}' waits for review; "
                "`kept memory review` lists them.",
                USAGE,
            )
        for proposal in mine:
            _decide(store, proposal, accept=not args.reject)
        return 0
    if not waiting:
        print("No memory change waits for review.")
        return 0
    for proposal in waiting:
        # A line an MCP client asked for is "via <client>", not a model's proposal.
        by = proposal.model if proposal.model.startswith("via ") else f"by {proposal.model}"
        print(f"Session {proposal.session} [{proposal.segment}] {by}: {proposal.change}")
        print(f"  history entry: {proposal.history_entry}")
        print(unified(proposal.base_text, proposal.memory_update, "MEMORY.md", "proposed"))
        why = why_text(proposal.decisions, proposal.memory_update, waiting=True)
        if why:
            print(why)
        print(f"  (`kept memory review --accept {proposal.session}` or --reject)\n")
    return 0


def _decide(store: MemoryStore, proposal: Proposal, *, accept: bool) -> None:
    """Accept or reject one proposal, and say so; CliError when it cannot be."""
    from memory.consolidation import review

    try:
        if accept:
            review.accept(store, proposal)
        else:
            review.reject(store, proposal)
    except (review.StaleProposal, LookupError) as exc:  # its journal was deleted meanwhile
        raise CliError(f"kept memory review: {exc}", FAILED) from None
    if accept:
        print(f"Accepted: session {proposal.session} [{proposal.segment}] ({proposal.change}).")
    else:
        print(f"Rejected: session {proposal.session} [{proposal.segment}] leaves memory unchanged.")


def cmd_tidy(args: argparse.Namespace, ctx: Context) -> int:
    """Ask the consolidation chain to tidy MEMORY.md; show the diff; write it if accepted."""
    import asyncio

    from app.cli.consolidate import describe_attempt
    from memory.consolidation.review import line_change, unified
    from memory.consolidation.tidy import apply_tidy, tidy

    catalog, store, settings = ctx.checked()
    result = asyncio.run(
        tidy(
            store,
            catalog,
            chat_model=settings.app.model,
            on_attempt=lambda a: print(f"  {describe_attempt(a)}", file=sys.stderr, flush=True),
        )
    )
    if not result.ok:
        from app.words.consolidation import next_step

        step = next_step(result.cause, shell=True)
        said = f"kept memory tidy: MEMORY.md was not tidied: {result.reason.rstrip('.')}."
        raise CliError(f"{said} {step}" if step else said, FAILED)
    old = result.base.text
    if not line_change(old, result.text).any:
        print("MEMORY.md is already tidy: nothing to change.")
        return 0
    print(unified(old, result.text, "MEMORY.md", f"tidied by {result.model}"))
    print(f"\n{result.summary} ({line_change(old, result.text)})")
    if not (args.yes or (sys.stdin.isatty() and _ask("Write this tidied MEMORY.md?"))):
        print(
            "Not applied: MEMORY.md is unchanged."
            + ("" if sys.stdin.isatty() else " (`kept memory tidy --yes` accepts without asking.)")
        )
        return 1
    if not apply_tidy(store, result):
        raise CliError(
            "kept memory tidy: MEMORY.md changed while it was being tidied; nothing was "
            "written. Run it again.",
            FAILED,
        )
    print("MEMORY.md tidied; the previous text is a version (`kept memory versions`).")
    return 0


def cmd_trust(args: argparse.Namespace, ctx: Context) -> int:
    """Each model's record of memory edits (accepted, refused) and whether its next change
    to MEMORY.md waits for your review, and why."""
    from memory.consolidation.chain import consolidation_chain
    from memory.consolidation.log import read_records
    from memory.consolidation.trust import RECENT, records, review_rule

    catalog, store, _ = ctx.checked()
    book = records(read_records(store))
    chain = consolidation_chain(catalog, store.settings).chain
    models = [m.id for m in chain.models] if chain is not None else []
    models += [m for m in book if m not in models]
    if not models:
        print("No model can save memory yet, and none has: `kept doctor` says why.")
        return 0
    rows = [("model", f"accepted (last {RECENT})", "refused", "its next change")]
    for model in models:
        record = book.get(model)
        rule = review_rule(model, store.settings, catalog, record)
        rows.append(
            (
                model,
                str(record.accepted if record else 0),
                str(record.refused if record else 0),
                f"{'waits for your review' if rule.before else 'saved at once'}: {rule.why}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(
            "  ".join([*(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)), row[3]])
        )
    return 0


def register(memory_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    blame = memory_sub.add_parser(
        "blame",
        help="MEMORY.md with the version, date, session and model that last wrote each line",
    )
    blame.set_defaults(func=cmd_blame)
    undo = memory_sub.add_parser("undo", help="put back the MEMORY.md that version N replaced")
    undo.add_argument("number", type=int, metavar="N")
    undo.set_defaults(func=cmd_undo)
    review = memory_sub.add_parser(
        "review",
        help='changes waiting for your review (review = "before"): show, accept or reject them',
    )
    choice = review.add_mutually_exclusive_group()
    choice.add_argument("--accept", metavar="SESSION", help="accept that session's change")
    choice.add_argument("--reject", metavar="SESSION", help="reject that session's change")
    review.set_defaults(func=cmd_review)
    tidy = memory_sub.add_parser(
        "tidy",
        help="have the consolidation chain tidy MEMORY.md; shown as a diff to accept or reject",
    )
    tidy.add_argument("--yes", action="store_true", help="accept without asking")
    tidy.set_defaults(func=cmd_tidy)
    trust = memory_sub.add_parser(
        "trust",
        help="each model's record of memory edits accepted and refused, and whether its "
        "changes wait for your review",
    )
    trust.set_defaults(func=cmd_trust)
