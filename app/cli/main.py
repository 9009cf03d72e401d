"""The `kept` command line: thin wrappers over catalog and memory."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.settings import Settings
    from catalog import Attempt, Catalog
    from memory import Consolidation, MemoryStore


def _cmd_models(args: argparse.Namespace) -> int:
    from app.settings import load_settings
    from catalog import load_catalog

    settings = load_settings()
    catalog = load_catalog(settings.catalog)
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    entries = catalog.entries if args.all else catalog.visible()
    rows = [("MODEL", "LABEL", "TIER", "GATEWAY", "KEY", "$/M IN", "$/M OUT", "CONTEXT")]
    for entry in entries:
        key = catalog.route(entry).key
        pricing = catalog.pricing(entry)
        rows.append(
            (
                entry.id + (" (hidden)" if entry.hidden else ""),
                entry.label,
                entry.tier,
                entry.gateway,
                f"yes ({key.source})" if key.usable else "no",
                f"{pricing.input_per_token * 1e6:.2f}" if pricing else "?",
                f"{pricing.output_per_token * 1e6:.2f}" if pricing else "?",
                f"{pricing.context_window:,}" if pricing else "?",
            )
        )
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

        plan, problem = consolidation_plan_of(catalog, settings, check=True)
        print("\nConsolidation chain (the models that save memory, in order):")
        for line in plan.lines() if plan else [problem]:
            print(f"  {line}")
    if catalog.keys.keyring_problem:
        print(f"\nnote: {catalog.keys.keyring_problem}", file=sys.stderr)
    return 0


CHAIN_SHOWN = 12  # models of a chain listed by `kept models --all`; longer ones are cut


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


def _memory_context() -> tuple[Catalog, MemoryStore, Settings]:
    """The catalog, settings and store, with config problems printed once."""
    from app.settings import load_settings
    from catalog import load_catalog
    from memory import MemoryStore

    settings = load_settings()
    catalog = load_catalog(settings.catalog)
    for problem in dict.fromkeys((*catalog.problems, *settings.problems)):
        print(f"warning: {problem}", file=sys.stderr)
    return catalog, MemoryStore(settings=settings.memory), settings


def _cmd_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memory.sessions.import_transcript import import_transcript

    path = Path(args.file)
    if not path.exists() or path.is_dir():
        said = f"{args.file} is a folder: name the file in it" if path.exists() else ""
        print(f"kept import: {said or f'no file at {args.file}'}.", file=sys.stderr)
        return 2
    _, store, _ = _memory_context()
    if args.source != "jsonl":
        from app.cli.imports import cmd_import_export

        code = cmd_import_export(args, store)
        _count_pending(store)
        return code
    try:
        journal, warnings = import_transcript(store, args.file)
    except (OSError, ValueError) as exc:
        print(f"kept import: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(journal.id)
    return 0


def _count_pending(store: MemoryStore) -> None:
    """Read what an import left pending into index.pending.json now, while the import is
    waited for anyway (10,000 journals: a few seconds beside a minute), so that the `kept
    consolidate --dry-run` that follows answers at once."""
    from memory.sessions.pending import pending

    with contextlib.suppress(OSError):
        pending(store)


def describe_attempt(attempt: Attempt) -> str:
    """One line per attempt, e.g. `qwen3-32b → did not call save_memory`."""
    from catalog import Outcome

    if attempt.outcome is Outcome.OK:
        return f"{attempt.model} ✓ {attempt.latency:.1f} s ${attempt.cost:.4f}"
    suffix = {Outcome.RETRIED: " (retrying)", Outcome.SKIPPED: " (skipped)"}.get(
        attempt.outcome, ""
    )
    return f"{attempt.model} → {attempt.reason}{suffix}"


def os_error(exc: OSError) -> str:
    """An OSError in one sentence that names its file once."""
    what = str(exc.strerror or exc)
    if exc.filename and str(exc.filename) not in what:
        return f"{exc.filename}: {what}"
    return what


def _cmd_consolidate(args: argparse.Namespace) -> int:
    import asyncio

    from app.cli.imports import Progress, cmd_dry_run
    from memory import consolidate_pending, next_retry
    from memory.consolidation.run import ASK_ABOVE_PARTS, held, retry_note

    catalog, store, settings = _memory_context()
    if args.dry_run:
        return cmd_dry_run(store, catalog, settings.app.model)
    progress = Progress(
        len(args.ids) if args.ids else sum(len(j.pending) for j in store.pending_sessions())
    )

    def report(result: Consolidation) -> None:
        """Each session's attempts, then what became of it, as soon as it is done."""
        for attempt in result.attempts:
            print(f"  {describe_attempt(attempt)}")
        print(_outcome(result), flush=True)
        progress(result)

    def _outcome(result: Consolidation) -> str:
        if result.proposed:
            return (
                f"Session {result.session}: a memory change is proposed and waits for "
                "your review (`kept memory review`)."
            )
        if result.saved:
            by = f" by {result.model}" if result.model else ""
            return (
                f"Session {result.session}: saved{by} ({result.elapsed:.1f} s, ${result.cost:.4f})."
            )
        if result.estimate:
            return (
                f"Session {result.session}: not saved yet, nothing lost: "
                f"{result.estimate} with `kept consolidate --yes {result.session}`."
            )
        journal = store.find_session(result.session)
        when = ""
        if result.segment and next_retry(journal, result.segment):
            when = f" {retry_note(journal, result.segment).capitalize()}."
        if result.segment and held(journal, result.segment):
            when = (
                " Every model refused it several times in a row, so the app no longer "
                "retries it on its own; `kept consolidate` tries again."
            )
        return (
            f"Session {result.session}: still pending, nothing lost. "
            f"{result.reason.rstrip('.')}.{when}"
        )

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
        print(f"\n{progress.interrupted()}", file=sys.stderr)
        return 130
    except LookupError as exc:
        print(f"kept consolidate: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"kept consolidate: {os_error(exc)}; nothing was lost, and pending sessions "
            "stay pending.",
            file=sys.stderr,
        )
        return 2
    for sentence in store.skipped.values():
        print(f"warning: {sentence}", file=sys.stderr)
    if not results:
        print("Nothing to consolidate: no session is pending.")
        return 0
    return 1 if any(not r.saved and not r.proposed for r in results) else 0


def _cmd_memory(args: argparse.Namespace) -> int:
    from app.settings import load_settings
    from memory import MemoryStore

    store = MemoryStore(settings=load_settings().memory)
    if args.memory_command == "path":
        print(store.memory_path)
        return 0
    try:
        memory = store.read_memory()
    except OSError as exc:
        print(f"kept memory show: {exc}", file=sys.stderr)
        return 2
    if memory.problem:
        print(f"warning: {memory.problem}", file=sys.stderr)
    if not memory.text.strip():
        print(
            f"MEMORY.md is empty: nothing has been saved yet ({store.memory_path}).",
            file=sys.stderr,
        )
        return 0
    from memory.sanitize import clean_text

    text = clean_text(memory.text) if sys.stdout.isatty() else memory.text
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


class _Version(argparse.Action):
    """--version, looked up only when asked: reading the package metadata costs every
    other command 70-110 ms."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("kept")
        except PackageNotFoundError:  # run from a checkout that was never installed
            number = "unknown"
        print(f"kept {number}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kept",
        description="Kept: a terminal assistant that never loses what you tell it. "
        "`kept` with no command opens the chat.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print Kept's version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    models = sub.add_parser("models", help="list the models Kept can use")
    models.add_argument(
        "--all", action="store_true", help="include the hidden consolidation models and every chain"
    )
    models.set_defaults(func=_cmd_models)

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
    imp.set_defaults(func=_cmd_import)

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
    cons.set_defaults(func=_cmd_consolidate)

    mem = sub.add_parser("memory", help="show, search, version and restore MEMORY.md")
    mem_sub = mem.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    mem_sub.add_parser("show", help="print MEMORY.md").set_defaults(func=_cmd_memory)
    mem_sub.add_parser("path", help="print the path of MEMORY.md").set_defaults(func=_cmd_memory)

    from app.cli.ask import register as register_ask
    from app.cli.eval import register as register_eval
    from app.cli.inspect import register
    from app.cli.mcp_server import register as register_mcp
    from app.cli.trust import register as register_trust

    register(sub, mem_sub)
    register_trust(mem_sub)
    register_ask(sub)
    register_eval(sub)
    register_mcp(sub)
    return parser


def data_folder_problem() -> str:
    """One sentence when the data folder cannot be used (a file, or not writable), else ""."""
    import os

    from memory.data.files import data_dir

    folder = data_dir()
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None:
        return ""
    if not existing.is_dir():
        what = "" if existing == folder else f" ({existing} is a file)"
        return (
            f"kept: the data folder {folder} cannot be used: it is not a folder{what}; "
            "move that file away or set KEPT_DATA_DIR to a folder."
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"kept: the data folder {folder} cannot be used: {existing} is not writable by you."
    return ""


def _innermost(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the command (and action) given: `kept models --bogus` is told the usage
    of `kept models`, not the top level's."""
    while True:
        chosen = next(
            (
                action.choices[getattr(args, action.dest)]
                for action in parser._actions
                if isinstance(action, argparse._SubParsersAction)
                and getattr(args, action.dest, None) in action.choices
            ),
            None,
        )
        if chosen is None:
            return parser
        parser = chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if getattr(args, "func", None) is not _cmd_models and (problem := data_folder_problem()):
        print(problem, file=sys.stderr)
        return 2
    if getattr(args, "func", None) not in (None, _cmd_models):
        from memory.data.files import data_dir
        from memory.sessions.orphans import discard_orphaned_private

        # A private session a crash or a kill left behind goes before anything reads sessions.
        if discard_orphaned_private(data_dir() / "sessions"):
            from memory import MemoryStore
            from memory.chat.attachments import forget_private

            forget_private(MemoryStore())  # and the files attached in them
    if getattr(args, "func", None) is None:
        from app.main import run

        return run()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(
            f"kept {args.command}: interrupted; nothing was lost (a file being written "
            "is only put in place once complete).",
            file=sys.stderr,
        )
        return 130
    except OSError as exc:  # a file Kept cannot read or write: one sentence, never a traceback
        print(f"kept {args.command}: {os_error(exc)}.", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
