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
        from app.settings import consolidation_plan_of, load_settings

        plan, problem = consolidation_plan_of(catalog, load_settings(), check=True)
        print("\nConsolidation chain (the models that save memory, in order):")
        for line in plan.lines() if plan else [problem]:
            print(f"  {line}")
    if catalog.keys.keyring_problem:
        print(f"\nnote: {catalog.keys.keyring_problem}", file=sys.stderr)
    return 0


def _memory_context():
    """The catalog, settings and store, with config problems printed once."""
    from app.settings import load_settings
    from catalog import load_catalog
    from memory import MemoryStore

    catalog = load_catalog()
    settings = load_settings()
    for problem in dict.fromkeys((*catalog.problems, *settings.problems)):
        print(f"warning: {problem}", file=sys.stderr)
    return catalog, MemoryStore(settings=settings.memory), settings


def _cmd_import(args: argparse.Namespace) -> int:
    from memory.importer import import_transcript

    _, store, _ = _memory_context()
    try:
        journal, warnings = import_transcript(store, args.file)
    except (OSError, ValueError) as exc:
        print(f"kept import: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(journal.id)
    return 0


def describe_attempt(attempt) -> str:
    """One line per attempt, e.g. `qwen3-32b → did not call save_memory`."""
    from catalog import Outcome

    if attempt.outcome is Outcome.OK:
        return f"{attempt.model} ✓ {attempt.latency:.1f} s ${attempt.cost:.4f}"
    suffix = {Outcome.RETRIED: " (retrying)", Outcome.SKIPPED: " (skipped)"}.get(
        attempt.outcome, "")
    return f"{attempt.model} → {attempt.reason}{suffix}"


def _cmd_consolidate(args: argparse.Namespace) -> int:
    import asyncio

    from memory import consolidate_pending, next_retry

    catalog, store, settings = _memory_context()
    try:
        results = asyncio.run(consolidate_pending(
            store, catalog, args.ids or None, chat_model=settings.app.model))
    except LookupError as exc:
        print(f"kept consolidate: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"kept consolidate: {exc.filename or 'a file'}: {exc.strerror}; nothing was "
              "lost, and pending sessions stay pending.", file=sys.stderr)
        return 2
    if not results:
        print("Nothing to consolidate: no session is pending.")
        return 0
    pending = 0
    for result in results:
        for attempt in result.attempts:  # each session's attempts, then what became of it
            print(f"  {describe_attempt(attempt)}")
        if result.proposed:
            print(f"Session {result.session}: a memory change is proposed and waits for your "
                  "review (`kept memory review`).")
            continue
        if result.saved:
            by = f" by {result.model}" if result.model else ""
            print(f"Session {result.session}: saved{by} ({result.elapsed:.1f} s, "
                  f"${result.cost:.4f}).")
            continue
        pending += 1
        journal = store.find_session(result.session)
        due = next_retry(journal, result.segment) if result.segment else None
        when = f" Next retry after {due.astimezone():%H:%M}." if due else ""
        print(f"Session {result.session}: still pending, nothing lost. "
              f"{result.reason.rstrip('.')}.{when}")
    return 1 if pending else 0


def _cmd_memory(args: argparse.Namespace) -> int:
    from memory import MemoryStore, load_memory_settings

    store = MemoryStore(settings=load_memory_settings()[0])
    if args.memory_command == "path":
        print(store.memory_path)
        return 0
    memory = store.read_memory()
    if memory.problem:
        print(f"warning: {memory.problem}", file=sys.stderr)
    if not memory.text.strip():
        print(f"MEMORY.md is empty: nothing has been saved yet ({store.memory_path}).",
              file=sys.stderr)
        return 0
    from memory.sanitize import clean_text

    text = clean_text(memory.text) if sys.stdout.isatty() else memory.text
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kept", description="Kept: a terminal assistant that never loses what you tell it."
    )
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("kept")
    except PackageNotFoundError:  # run from a checkout that was never installed
        number = "unknown"
    parser.add_argument("--version", action="version", version=f"kept {number}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    models = sub.add_parser("models", help="list the models Kept can use")
    models.add_argument("--all", action="store_true",
                        help="include the hidden consolidation models and every chain")
    models.set_defaults(func=_cmd_models)

    imp = sub.add_parser("import", help="turn a transcript (journal format) into a pending "
                         "session; prints its id")
    imp.add_argument("file", help="a .jsonl transcript: one message per line")
    imp.set_defaults(func=_cmd_import)

    cons = sub.add_parser("consolidate", help="save pending sessions into memory now")
    cons.add_argument("ids", nargs="*", metavar="ID", help="session ids (default: all pending)")
    cons.set_defaults(func=_cmd_consolidate)

    mem = sub.add_parser("memory", help="show, search, version and restore MEMORY.md")
    mem_sub = mem.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    mem_sub.add_parser("show", help="print MEMORY.md").set_defaults(func=_cmd_memory)
    mem_sub.add_parser("path", help="print the path of MEMORY.md").set_defaults(
        func=_cmd_memory)

    from app.cli_inspect import register
    from app.cli_trust import register as register_trust

    register(sub, mem_sub)
    register_trust(mem_sub)
    return parser


def data_folder_problem() -> str:
    """One sentence when the data folder cannot be used (a file, or not writable), else ""."""
    import os

    from memory.storage import data_dir

    folder = data_dir()
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None:
        return ""
    if not existing.is_dir():
        what = "" if existing == folder else f" ({existing} is a file)"
        return (f"kept: the data folder {folder} cannot be used: it is not a folder{what}; "
                "move that file away or set KEPT_DATA_DIR to a folder.")
    if not os.access(existing, os.W_OK | os.X_OK):
        return (f"kept: the data folder {folder} cannot be used: {existing} is not writable "
                "by you.")
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is not _cmd_models and (problem := data_folder_problem()):
        print(problem, file=sys.stderr)
        return 2
    if getattr(args, "func", None) is None:
        from app.main import run

        return run()
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
