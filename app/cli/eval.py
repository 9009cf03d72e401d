"""`kept eval memory`: how well Kept's memory works with a model, measured on a dataset's
sessions and questions through the same consolidation and chat code the app uses."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from app.cli.errors import USAGE, CliError

if TYPE_CHECKING:
    from app.cli.context import Context
    from memory.eval import CategoryScore, Report

NAME = "kept eval memory"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "none"


def table(report: Report) -> str:
    """The per-category scores, then memory, sessions, cost and time, as printed."""
    head = ("category", "questions", "strict", "judge", "tokens/answer", "cost", "s/answer")
    rows: list[tuple[str, ...]] = [head]
    for score in report.categories():
        rows.append(_row(score))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    kept, users = report.user_lines
    grounded, added = report.grounded
    sessions = report.sessions
    saved = sum(s.saved for s in sessions)
    refused = [reason for s in sessions for reason in s.refused]
    judging = f", ${report.judge_cost:.4f} judging" if report.judge else ""
    lines += [
        "",
        f"Your own lines kept in MEMORY.md: {_share(kept, users)}. "
        f"New lines grounded in what you said: {_share(grounded, added)}.",
        f"Sessions: {saved} saved, {len(sessions) - saved} pending"
        + (f"; Kept refused {len(refused)} replies (e.g. {refused[0]})." if refused else "."),
        f"Cost: ${report.consolidation_cost:.4f} consolidating, ${report.answer_cost:.4f} "
        f"answering{judging}. Time: {report.seconds:.1f} s "
        f"({report.consolidation_seconds:.1f} s consolidating).",
    ]
    return "\n".join(lines)


def _row(score: CategoryScore) -> tuple[str, ...]:
    return (
        score.category,
        f"{score.questions:,}",
        _percent(score.strict),
        _percent(score.judge),
        f"{score.tokens_per_answer:,.0f}",
        f"${score.cost:.4f}",
        f"{score.seconds_per_answer:.1f}",
    )


def cmd_eval_memory(args: argparse.Namespace, ctx: Context) -> int:
    """0 when the eval ran (whatever it scored), 2 when it could not: a data file Kept
    cannot use, a model that cannot be asked or never answered, a report not written."""
    if args.edits:
        from app.cli.eval_edits import cmd_eval_edits

        return cmd_eval_edits(args, ctx)
    import asyncio

    from memory.eval import (
        DatasetError,
        cannot_answer,
        load_dataset,
        nothing_answered,
        run_eval,
    )

    try:
        dataset = load_dataset(args.data).only(args.persona or ())
    except DatasetError as exc:
        raise CliError(f"{NAME}: {exc}", USAGE) from None
    catalog, _, settings = ctx.checked()
    model = args.model or settings.app.model
    for who in dict.fromkeys(m for m in (model, args.judge) if m):
        problem = cannot_answer(catalog, who)
        if problem:
            raise CliError(f"{NAME}: {problem}", USAGE)
    sessions = sum(len(p.sessions) for p in dataset.personas)
    questions = sum(len(p.questions) for p in dataset.personas)
    print(
        f"{dataset.name}: {len(dataset.personas)} personas, {sessions} sessions, "
        f"{questions} questions; {model} consolidates and answers"
        + (f", {args.judge} judges." if args.judge else "."),
        file=sys.stderr,
        flush=True,
    )
    tty = sys.stderr.isatty()

    def progress(line: str) -> None:
        if tty:  # one line, rewritten: a long run shows where it is without scrolling
            print(f"\r\x1b[2K  {line[:100]}", end="", file=sys.stderr, flush=True)

    report = asyncio.run(
        run_eval(
            dataset,
            catalog,
            model,
            settings=settings.memory,
            judge=args.judge,
            on_progress=progress,
        )
    )
    if tty:
        print("\r\x1b[2K", end="", file=sys.stderr, flush=True)
    if args.json:
        from app.cli.reports import write_report

        write_report(args.json, report.to_dict(), NAME)
    failed = nothing_answered(report)
    if failed:
        raise CliError(f"{NAME}: {failed}", USAGE)
    print(table(report))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evals = sub.add_parser("eval", help="measure how well memory works with a model")
    kinds = evals.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    memory = kinds.add_parser(
        "memory",
        help="replay a dataset's sessions through consolidation in a throwaway folder, "
        "ask its questions, and score the answers",
    )
    memory.add_argument(
        "--model", help="the model that consolidates and answers (default: the chat model)"
    )
    memory.add_argument(
        "--judge", metavar="MODEL", help="also ask this model whether each answer is right"
    )
    memory.add_argument(
        "--data",
        metavar="FILE",
        help="a Kept eval dataset or a LoCoMo JSON file (default: the dataset Kept ships)",
    )
    memory.add_argument(
        "--persona",
        metavar="NAME",
        action="append",
        help="only this persona (LoCoMo: a sample_id such as conv-26); repeat for more",
    )
    memory.add_argument("--json", metavar="FILE", help="also write the whole report as JSON")
    memory.add_argument(
        "--edits",
        action="store_true",
        help="instead, measure Kept's checks on proposed memory edits, good and bad, by "
        "category (no model needed; --judge MODEL adds a second opinion)",
    )
    memory.add_argument(
        "--split",
        choices=("all", "dev", "test"),
        default="all",
        help="with --edits: which conversations of the data (test: held out)",
    )
    memory.add_argument(
        "--misses", action="store_true", help="with --edits: list each edit decided wrongly"
    )
    memory.set_defaults(func=cmd_eval_memory)
