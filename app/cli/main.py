"""The `kept` command line: parse the arguments, build the verbs' shared context, run the
verb, and say its failure (a CliError) in one place."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli.errors import USAGE, CliError, os_error

__all__ = ["build_parser", "data_folder_problem", "main", "os_error"]


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
    from app.cli import ask, consolidate, imports, inspect, mcp_server, models, sync, trust
    from app.cli import eval as evaluation

    parser = argparse.ArgumentParser(
        prog="kept",
        description="Kept: a terminal assistant that never loses what you tell it. "
        "`kept` with no command opens the chat.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print Kept's version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    models.register(sub)
    imports.register(sub)
    consolidate.register(sub)
    mem = sub.add_parser("memory", help="show, search, version and restore MEMORY.md")
    mem_sub = mem.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    inspect.register(sub, mem_sub)
    trust.register(mem_sub)
    ask.register(sub)
    evaluation.register(sub)
    mcp_server.register(sub)
    sync.register(sub)
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
    return _device_problem()


def _device_problem() -> str:
    """One sentence when this machine's device id cannot be read or made, else ""."""
    from memory.data.device import state_dir, this_device

    try:
        this_device()
    except ValueError as exc:
        return f"kept: {exc}"
    except OSError as exc:
        return (
            f"kept: this machine's id cannot be kept in {state_dir()} ({os_error(exc)}); "
            "fix that folder or set KEPT_STATE_DIR to another."
        )
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


def _discard_orphans() -> None:
    """A folder made by an older Kept is moved to today's layout, then a private session a
    crash or a kill left behind goes, before anything reads sessions, and the files
    attached in it with it."""
    from memory.data.files import data_dir
    from memory.data.layout import Layout
    from memory.data.upgrade import upgrade
    from memory.sessions.orphans import discard_orphaned_private

    layout = Layout(data_dir())
    try:
        upgrade(layout)  # a few looks when there is nothing to move
    except OSError as exc:
        raise CliError(
            f"kept: {layout.root} could not be moved to this version's layout "
            f"({os_error(exc)}); what was moved is in place, and the rest is moved at the "
            "next start.",
            USAGE,
        ) from None
    if discard_orphaned_private(layout.sessions_dir):
        from memory import MemoryStore
        from memory.chat.attachments import forget_private

        forget_private(MemoryStore())


def _run(args: argparse.Namespace) -> int:
    """The verb chosen, or the chat when none is; a CliError is raised, not printed."""
    from app.cli.context import Context

    func = getattr(args, "func", None)
    if getattr(args, "data_folder", True) and (problem := data_folder_problem()):
        raise CliError(problem, USAGE)
    if func is None:
        from app.main import run  # `kept` with no command: the chat (the only Textual import)

        return run()
    if getattr(args, "data_folder", True):
        _discard_orphans()
    try:
        return int(func(args, Context()))
    except KeyboardInterrupt:
        raise CliError(
            f"kept {args.command}: interrupted; nothing was lost (a file being written "
            "is only put in place once complete).",
            130,
        ) from None
    except OSError as exc:  # a file Kept cannot read or write: one sentence, never a traceback
        raise CliError(f"kept {args.command}: {os_error(exc)}.", USAGE) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return _run(args)
    except CliError as error:  # the one place a verb's failure is said
        print(error.message, file=sys.stderr)
        return error.code


if __name__ == "__main__":
    sys.exit(main())
