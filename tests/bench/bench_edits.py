"""Kept's edit checks on memory/evaldata/edits.json (`kept eval memory --edits`), no model.

Prints, for the dev and the held-out test conversations, good edits applied and bad edits
kept out of MEMORY.md, beside a baseline measured in the same run: an edit stands whenever
its quotes are words the user typed (the quote check alone, no reading of the line against
them). Then each category of the held-out half, and the time a decision takes.
"""

from __future__ import annotations

import time

from memory.consolidation.decisions import Decision, Fate
from memory.consolidation.quotes import Said, find_quote
from memory.eval.edits import Case, EditsReport, decide, load_cases, tally

RUNS = 3


def _quotes_only(case: Case) -> tuple[Decision, ...]:
    """The baseline: applied when every quote is the user's typed words, else refused."""
    said = Said.of(case.messages)
    out = []
    for kept in decide(case):
        quotes = kept.edit.evidence
        ok = bool(quotes) and all(not isinstance(find_quote(q, said), str) for q in quotes)
        out.append(Decision(kept.edit, Fate.APPLIED if ok else Fate.REFUSED))
    return tuple(out)


def _line(name: str, report: EditsReport) -> str:
    applied, goods = report.side(True)
    kept_out, bads = report.side(False)
    return (
        f"{name:28} good applied {applied:3}/{goods} ({applied / goods:4.0%})   "
        f"bad kept out {kept_out:3}/{bads} ({kept_out / bads:4.0%})   "
        f"replies refused whole {report.whole_refusals}/{report.cases}"
    )


def main() -> None:
    cases = load_cases()
    edits = sum(len(c.edits) for c in cases)
    print(
        f"{len(cases)} conversations, {edits} edits; languages: "
        f"{', '.join(sorted({c.language for c in cases}))}"
    )
    for split in ("dev", "test"):
        chosen = [c for c in cases if c.split == split]
        print(
            _line(
                f"{split}: quotes only (baseline)", tally(chosen, [_quotes_only(c) for c in chosen])
            )
        )
        print(_line(f"{split}: Kept's checks", tally(chosen, [decide(c) for c in chosen])))
    held_out = [c for c in cases if c.split == "test"]
    report = tally(held_out, [decide(c) for c in held_out])
    print("held-out, per category:   applied  held  refused  unchanged  right")
    for (good, category), counted in sorted(
        report.tallies.items(), key=lambda kv: (not kv[0][0], kv[0][1])
    ):
        f = counted.fates
        print(
            f"  {'good' if good else 'bad ':4} {category:20} {f[Fate.APPLIED]:5} {f[Fate.HELD]:5} "
            f"{f[Fate.REFUSED]:7} {f[Fate.UNCHANGED]:9}  {counted.share:4.0%}"
        )
    best = float("inf")
    for _ in range(RUNS):
        started = time.perf_counter()
        for case in cases:
            decide(case)
        best = min(best, time.perf_counter() - started)
    print(
        f"deciding every edit: {best * 1000:.0f} ms, {best / edits * 1000:.2f} ms an edit "
        f"(best of {RUNS}, the session's quotes read once a reply)"
    )
