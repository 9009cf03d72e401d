"""`kept memory blame|undo|tidy|review`: where memory came from, and changes you decide on."""

from __future__ import annotations

import argparse
import sys


def _store():
    from memory import MemoryStore, load_memory_settings

    return MemoryStore(settings=load_memory_settings()[0])


def cmd_blame(args: argparse.Namespace) -> int:
    """MEMORY.md, each line with the version, date, session and model that last wrote it."""
    from memory.provenance import blame
    from memory.sanitize import clean_text

    store = _store()
    lines = blame(store)
    if not lines:
        print(f"MEMORY.md is empty: nothing has been saved yet ({store.memory_path}).",
              file=sys.stderr)
        return 0
    rows = []
    for line in lines:
        version = line.version
        if version is None:
            rows.append(("-", "", "edited by you (not yet versioned)", "", line.text))
            continue
        who = version.session or version.source
        rows.append((f"v{version.number}", version.time[:16].replace("T", " "), who,
                     version.model or "", line.text))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    colour = sys.stdout.isatty()
    for row in rows:
        head = "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        text = clean_text(row[4]) if colour else row[4]
        print(f"{head} │ {text}")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    store = _store()
    try:
        number = store.undo(args.number)
    except (LookupError, ValueError) as exc:
        print(f"kept memory undo: {exc}", file=sys.stderr)
        return 2
    print(f"Version {args.number} undone: MEMORY.md is as it was before it (saved as "
          f"version {number}). The history entry stays.")
    return 0


def register(memory_sub: argparse._SubParsersAction) -> None:
    blame = memory_sub.add_parser("blame", help="MEMORY.md with the version, date, session and "
                                  "model that last wrote each line")
    blame.set_defaults(func=cmd_blame)
    undo = memory_sub.add_parser("undo", help="put back the MEMORY.md that version N replaced")
    undo.add_argument("number", type=int, metavar="N")
    undo.set_defaults(func=cmd_undo)
