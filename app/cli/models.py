"""`kept models`: the models Kept can use, their keys and prices, and with --all every
chain and the consolidation chain."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.cli.context import Context
    from catalog import Catalog, ModelEntry

CHAIN_SHOWN = 12  # models of a chain listed by `kept models --all`; longer ones are cut


def cmd_models(args: argparse.Namespace, ctx: Context) -> int:
    catalog = ctx.catalog
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    entries = catalog.entries if args.all else catalog.visible()
    rows: list[tuple[str, ...]] = [
        ("MODEL", "LABEL", "TIER", "GATEWAY", "KEY", "$/M IN", "$/M OUT", "CONTEXT")
    ]
    rows += [_row(catalog, entry) for entry in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    if args.all:
        print("\nChains (each model, then what it falls back to):")
        for entry in entries:
            print(f"  {_chain_preview(catalog, entry.id)}")
        from app.settings import consolidation_plan_of

        plan, problem = consolidation_plan_of(catalog, ctx.settings, check=True)
        print("\nConsolidation chain (the models that save memory, in order):")
        for line in plan.lines() if plan else [problem]:
            print(f"  {line}")
    if catalog.keys.keyring_problem:
        print(f"\nnote: {catalog.keys.keyring_problem}", file=sys.stderr)
    return 0


def _row(catalog: Catalog, entry: ModelEntry) -> tuple[str, ...]:
    key = catalog.route(entry).key
    pricing = catalog.pricing(entry)
    return (
        entry.id + (" (hidden)" if entry.hidden else ""),
        entry.label,
        entry.tier,
        entry.gateway,
        f"yes ({key.source})" if key.usable else "no",
        f"{pricing.input_per_token * 1e6:.2f}" if pricing else "?",
        f"{pricing.output_per_token * 1e6:.2f}" if pricing else "?",
        f"{pricing.context_window:,}" if pricing else "?",
    )


def _chain_preview(catalog: Catalog, model_id: str) -> str:
    """`a → b → c  (why it ends)`, cut after CHAIN_SHOWN models: thousands of chained user
    models must not print gigabytes, nor walk every chain to its end."""
    ids, seen = [model_id], {model_id}
    while True:
        nxt = catalog.get(ids[-1]).fallback
        if nxt is None or nxt in seen or nxt not in catalog:
            return f"{' → '.join(ids)}  ({catalog.chain(model_id).end})"
        if len(ids) == CHAIN_SHOWN:
            return f"{' → '.join(ids)} → …  (more than {CHAIN_SHOWN} models; the rest not shown)"
        ids.append(nxt)
        seen.add(nxt)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = sub.add_parser("models", help="list the models Kept can use")
    models.add_argument(
        "--all", action="store_true", help="include the hidden consolidation models and every chain"
    )
    # Listing models needs no data folder: it is not checked, and no session is touched.
    models.set_defaults(func=cmd_models, data_folder=False)
