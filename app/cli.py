"""The `kept` command line: thin wrappers over catalog and memory."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _cmd_models(args: argparse.Namespace) -> int:
    from catalog import load_catalog

    catalog = load_catalog()
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    entries = catalog.entries if args.all else catalog.visible()
    rows = [("MODEL", "LABEL", "TIER", "GATEWAY", "KEY", "$/M IN", "$/M OUT", "CONTEXT")]
    for entry in entries:
        key = catalog.route(entry).key
        pricing = catalog.pricing(entry)
        rows.append((
            entry.id + (" (hidden)" if entry.hidden else ""),
            entry.label,
            entry.tier,
            entry.gateway,
            f"yes ({key.source})" if key.usable else "no",
            f"{pricing.input_per_token * 1e6:.2f}" if pricing else "?",
            f"{pricing.output_per_token * 1e6:.2f}" if pricing else "?",
            f"{pricing.context_window:,}" if pricing else "?",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())
    if args.all:
        print("\nChains (each model, then what it falls back to):")
        for entry in entries:
            chain = catalog.chain(entry.id)
            print(f"  {' → '.join(chain.ids)}  ({chain.end})")
    if catalog.keys.keyring_problem:
        print(f"\nnote: {catalog.keys.keyring_problem}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kept", description="Kept: a terminal assistant that never loses what you tell it."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    models = sub.add_parser("models", help="list the models Kept can use")
    models.add_argument("--all", action="store_true",
                        help="include the hidden consolidation models and every chain")
    models.set_defaults(func=_cmd_models)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
