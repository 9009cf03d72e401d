"""`kept eval memory --edits`: Kept's edit checks measured on both sides (memory.eval.edits),
with no model, or with a judge model's second opinion."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from app.cli.errors import USAGE, CliError

if TYPE_CHECKING:
    from app.cli.context import Context
    from memory.eval.edits import Case, EditsReport

NAME = "kept eval memory --edits"
SPLITS = ("all", "dev", "test")


def table(report: EditsReport, *, misses: bool = False) -> str:
    """Per category: edits, what became of them, and the share right; then both sides."""
    from memory.consolidation.decisions import Fate

    head = ("", "category", "edits", "applied", "held", "refused", "unchanged", "right")
    rows: list[tuple[str, ...]] = [head]
    for (good, _), counted in sorted(
        report.tallies.items(), key=lambda kv: (not kv[0][0], kv[0][1])
    ):
        fates = [
            str(counted.fates[f]) for f in (Fate.APPLIED, Fate.HELD, Fate.REFUSED, Fate.UNCHANGED)
        ]
        side = "good" if good else "bad"
        rows.append((side, counted.category, str(counted.total), *fates, f"{counted.share:.0%}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    applied, goods = report.side(True)
    kept_out, bads = report.side(False)
    lines += [
        "",
        f"Good edits applied: {applied}/{goods} ({applied / max(goods, 1):.0%}). "
        f"Bad edits kept out of MEMORY.md: {kept_out}/{bads} ({kept_out / max(bads, 1):.0%}).",
        f"Replies refused whole: {report.whole_refusals} of {report.cases}.",
    ]
    if misses:
        for counted in report.tallies.values():
            side = "good" if counted.good else "bad"
            lines += [f"  {side} {counted.category}: {miss}" for miss in counted.misses]
    return "\n".join(lines)


def _cases(args: argparse.Namespace) -> list[Case]:
    from pathlib import Path

    from memory.eval import DatasetError
    from memory.eval.edits import EDITS, load_cases

    try:
        cases = load_cases(Path(args.data) if args.data else EDITS)
    except DatasetError as exc:
        raise CliError(f"{NAME}: {exc}", USAGE) from None
    return [c for c in cases if args.split in ("all", c.split)]


def _judged(cases: list[Case], judge: str, ctx: Context) -> EditsReport:
    import asyncio

    from catalog import RetryPolicy
    from memory.consolidation.trust import review_rule
    from memory.eval import cannot_answer
    from memory.eval.edits import judged, tally

    catalog, _, settings = ctx.checked()
    problem = cannot_answer(catalog, judge)
    if problem:
        raise CliError(f"{NAME}: {problem}", USAGE)
    trusted = not review_rule(judge, settings.memory, catalog, None).before
    policy = RetryPolicy.from_config(catalog.config.transport)

    async def run() -> EditsReport:
        decided = [await judged(c, catalog, judge, policy, trusted=trusted) for c in cases]
        return tally(cases, decided)

    return asyncio.run(run())


def cmd_eval_edits(args: argparse.Namespace, ctx: Context) -> int:
    """0 when the eval ran, 2 when the data or the judge cannot be used."""
    from memory.eval.edits import run_edits

    cases = _cases(args)
    who = f"{args.judge} gives a second opinion" if args.judge else "no model is asked"
    print(f"{len(cases)} conversations ({args.split}); {who}.", file=sys.stderr, flush=True)
    report = _judged(cases, args.judge, ctx) if args.judge else run_edits(cases)
    if args.json:
        from app.cli.reports import write_report

        write_report(args.json, report.to_dict(), NAME)
    print(table(report, misses=args.misses))
    return 0
