"""`kept memory show|path|grep|versions|restore`, `kept log`, `kept doctor`: memory you can
inspect."""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.errors import USAGE, CliError

if TYPE_CHECKING:
    from app.cli.context import Context
    from app.settings import Settings
    from catalog import Catalog
    from memory import MemoryStore
    from memory.recall.search import Pattern, Places
    from memory.sessions.pending import PendingPart, PendingSession

RED, MAGENTA, GREEN, DIM, RESET = "\033[1;31m", "\033[35m", "\033[32m", "\033[2m", "\033[0m"


def cmd_memory(args: argparse.Namespace, ctx: Context) -> int:
    """`kept memory show` and `kept memory path`."""
    store = ctx.store
    if args.memory_command == "path":
        print(store.memory_path)
        return 0
    try:
        memory = store.read_memory()
    except OSError as exc:
        raise CliError(f"kept memory show: {exc}", USAGE) from None
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


def _highlight(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], RED, text[start:end], RESET]
        last = end
    return "".join([*out, text[last:]])


_DAY = re.compile(r"\d{4}(-\d{2}(-\d{2})?)?$")


def cmd_grep(args: argparse.Namespace, ctx: Context) -> int:
    """grep over HISTORY.md, its archives and every session: 0 match, 1 none, 2 error."""
    from memory.recall.search import Pattern

    for flag, value in (("--since", args.since), ("--until", args.until)):
        if value and not _DAY.match(value):
            raise CliError(
                f"kept memory grep: {flag} takes a date, YYYY-MM-DD (or YYYY-MM, YYYY), "
                f"not {value!r}",
                USAGE,
            )

    try:
        pattern = Pattern(args.pattern, regex=args.regex, ignore_case=not args.case_sensitive)
    except re.error as exc:
        raise CliError(
            f"kept memory grep: bad regular expression {args.pattern!r}: {exc}", USAGE
        ) from None
    except ValueError as exc:
        raise CliError(f"kept memory grep: {exc}", USAGE) from None
    from memory.recall.search import Places

    store = Places(ctx.data_dir)  # not the whole store: start-up is most of a short search
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    names: dict[Path, str] = {}
    errors: list[str] = []
    try:
        found = _print_matches(
            store, pattern, colour, names, errors, args.since or "", args.until or ""
        )
    except BrokenPipeError:  # `kept memory grep x | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    for error in errors:
        print(f"kept memory grep: {error}", file=sys.stderr)
    return 2 if errors else (0 if found else 1)


def _print_matches(
    store: Places,
    pattern: Pattern,
    colour: bool,
    names: dict[Path, str],
    errors: list[str],
    since: str,
    until: str,
) -> bool:
    from memory.recall.pattern import Scope
    from memory.recall.search import grep

    if colour:
        from memory.sanitize import clean_text

    found = False
    write = sys.stdout.write
    # A regular expression is matched only in the search's child process (one can run for
    # ever): its spans come back with the match instead of being searched for again here.
    in_child = colour and pattern.regex
    scope = Scope(details=in_child, since=since, until=until)
    for match in grep(store, pattern, scope, errors=errors):
        found = True
        name = names.get(match.file)
        if name is None:
            name = names[match.file] = os.path.relpath(match.file, store.root)
        # A message in a transcript says when and who: "[2026-11-20 09:15] user: ...".
        said = f"[{match.stamp}] {match.role}: " if match.role else ""
        text = clean_text(match.text) if colour else match.text
        if colour:
            if not in_child:
                spans = pattern.spans(text)
            else:  # cleaning moved the characters: the line is shown unhighlighted
                spans = match.spans if text == match.text else ()
            write(
                f"{MAGENTA}{name}{RESET}:{GREEN}{match.line}{RESET}:{DIM}{said}{RESET}"
                f"{_highlight(text, spans)}\n"
            )
        else:
            write(f"{name}:{match.line}:{said}{text}\n")
    sys.stdout.flush()
    return found


def cmd_versions(args: argparse.Namespace, ctx: Context) -> int:
    store = ctx.store
    versions = store.versions()
    if not versions:
        print("No versions yet: MEMORY.md has not been written by Kept or saved by you.")
        return 0
    for version in versions:
        by = version.source
        if version.session:
            by += f" (session {version.session}, {version.model})"
        print(f"{version.number:4d}  {version.time}  {by}")
    return 0


def cmd_restore(args: argparse.Namespace, ctx: Context) -> int:
    try:
        number = ctx.store.restore(args.number)
    except (LookupError, OSError) as exc:
        from app.words.memory import not_written

        raise CliError(f"kept memory restore: {not_written(exc, shell=True)}", USAGE) from None
    print(f"MEMORY.md is now version {args.number} again (saved as version {number}).")
    return 0


def cmd_log(args: argparse.Namespace, ctx: Context) -> int:
    from app.words.evidence import dropped
    from app.words.models import health_line
    from memory.consolidation.log import figures, model_health, sessions
    from memory.sessions.pending import scan_pending

    store = ctx.store
    logs = sessions(store)
    if not logs:
        print("No consolidation has run yet.")
    out = sys.stdout.write  # thousands of lines: one call each, not print's several
    for log in logs:
        mark = "saved" if log.saved else "pending"
        out(f"{log.session} [{log.segment}] {mark}: {log.chain()}\n")
        for reason in log.dropped:  # edits Kept dropped from the reply it kept
            out(dropped(reason) + "\n")
    scan = scan_pending(store)
    waiting = [(s, part) for s in scan.sessions for part in s.parts]
    for sentence in scan.unreadable.values():
        print(f"warning: {sentence}", file=sys.stderr)
    if waiting:
        _print_pending(store, waiting, out)
    rows = figures(store)
    if rows:
        print(f"\n{'MODEL':32} {'ATTEMPTS':>8} {'SAVED':>6} {'MEDIAN':>8} {'COST':>9}")
        for row in rows:
            print(
                f"{row.model:32} {row.attempts:8d} {row.success_rate:6.0%} "
                f"{row.median_latency:7.2f}s ${row.cost:8.4f}"
            )
    states = model_health(store)
    if states:
        print("\nModels now:")
        for state in states:
            print(f"  {state.model}: {health_line(state, shell=True)}")
    _print_sync(store)
    return 0


def _print_sync(store: MemoryStore) -> None:
    """Where sync stands, for a data folder that syncs (nothing otherwise)."""
    from app.words.sync import sync_lines
    from memory.sync.status import sync_status

    lines = sync_lines(sync_status(store))
    if lines:
        print("\nSync:")
        print("\n".join(lines))


def _print_pending(
    store: MemoryStore,
    waiting: list[tuple[PendingSession, PendingPart]],
    out: Callable[[str], object],
) -> None:
    """Each pending part: when it is tried again, and its last failure with the next step."""
    from app.words.consolidation import last_failure
    from memory.consolidation.review import proposals
    from memory.consolidation.schedule import held, retry_note

    proposed = {(p.session, p.segment) for p in proposals(store)}
    print("\nPending:")
    for session, part in waiting:
        segment, journal = part.segment, session.marks
        when = retry_note(journal, segment)
        if (session.id, segment) in proposed:
            when = "awaiting your review (`kept memory review`)"
        elif held(journal, segment):
            when = "refused by every model again and again: retried only by hand"
        failures = journal.failures.get(segment, [])
        last = ""
        if failures:
            last = "; last failure: " + last_failure(
                failures[-1].reason, failures[-1].cause, shell=True
            )
        out(f"  {session.id} [{segment}] {part.messages} messages, {when}{last}\n")
    print("  (`kept consolidate` retries them now)")


def _mode(path: Path) -> str:
    return f"{stat.S_IMODE(path.stat().st_mode):o}"


def cmd_doctor(args: argparse.Namespace, ctx: Context) -> int:
    """What Kept sees: keyring, folders and permissions, keys, pending sessions, config."""
    import keyring

    from app.settings import config_path
    from app.words import models as advice

    backend = keyring.get_keyring()
    print(f"keyring backend: {type(backend).__module__}.{type(backend).__name__}")
    settings, catalog, store = ctx.settings, ctx.catalog, ctx.store
    print(f"config: {config_path()}" + ("" if config_path().exists() else " (not created)"))
    found = [*catalog.problems, *settings.problems]
    if settings.app.model not in catalog:
        found.append(advice.app_model_problem(settings.app.model, shell=True))
    # The catalog's problems are among the settings': each is printed once.
    problems = 0
    for problem in dict.fromkeys(found):
        problems += 1
        print(f"  problem: {problem}")
    problems += _doctor_files(store)
    _doctor_gateways(catalog)
    problems += _doctor_chain(catalog, settings)
    from memory.sessions.pending import scan_pending

    scan = scan_pending(store)
    waiting = scan.sessions
    print(f"pending sessions: {len(waiting)}" + (" (`kept log` says why)" if waiting else ""))
    for sentence in scan.unreadable.values():
        problems += 1
        print(f"  problem: {sentence}")
    return 1 if problems else 0


def _doctor_files(store: MemoryStore) -> int:
    """The data folders' and memory files' modes; how many problems were printed."""
    problems = 0
    for label, folder in (
        ("data", store.root),
        ("sessions", store.sessions_dir),
        ("versions", store.versions_dir),
    ):
        if not folder.exists():
            print(f"{label}: {folder} (not created yet)")
            continue
        mode = _mode(folder)
        problems += mode != "700"
        print(f"{label}: {folder} mode {mode}" + ("" if mode == "700" else "  ← should be 700"))
    memory_problem = store.memory_problem()
    if memory_problem:
        problems += 1
        print(f"  problem: {memory_problem}")
    for path in (store.memory_path, store.history_path):
        if path.is_file() and not path.is_symlink():
            mode = _mode(path)
            problems += mode != "600"
            print(
                f"{path.name}: {path.stat().st_size:,} bytes, mode {mode}"
                + ("" if mode == "600" else "  ← should be 600")
            )
    return problems


def _doctor_gateways(catalog: Catalog) -> None:
    """Where each gateway's key comes from, or why it has none."""
    from app.words import models as advice
    from catalog.config import remote_host

    for gateway in catalog.gateways.values():
        key = catalog.keys.lookup(gateway)
        host = None if gateway.needs_key else remote_host(gateway.base_url)
        if key.source == "not needed":
            state = "no key needed"
            if host:  # keyless is not local: say where the transcripts go
                state += f"; at {host}, not on this machine: transcripts are sent there"
        else:
            problem = advice.missing_key(gateway, shell=True) if key.missing else key.problem
            state = f"key from {key.source}" if key.usable else f"no key ({problem})"
        print(f"gateway {gateway.name}: {state}")
    if catalog.keys.keyring_problem:
        print(f"note: {catalog.keys.keyring_problem}")


def _doctor_chain(catalog: Catalog, settings: Settings) -> int:
    """The consolidation chain, servers asked; 1 when no model of it can answer."""
    from app.settings import consolidation_plan_of

    plan, problem = consolidation_plan_of(catalog, settings, check=True)
    print("consolidation chain:")
    for line in plan.lines() if plan else [problem]:
        print(f"  {line}")
    if plan is None or not plan.can_answer:
        from app.words.models import chain_fix

        print(f"  problem: {chain_fix(plan.blocked, shell=True) if plan else problem}")
        return 1
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    memory_sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    memory_sub.add_parser("show", help="print MEMORY.md").set_defaults(func=cmd_memory)
    memory_sub.add_parser("path", help="print the path of MEMORY.md").set_defaults(func=cmd_memory)
    grep = memory_sub.add_parser(
        "grep", help="search history, archives and every session's transcript, newest first"
    )
    grep.add_argument("pattern")
    # Case is ignored by default, as in /grep; -s matches it exactly (-i is kept for habit).
    grep.add_argument("-i", "--ignore-case", action="store_true", help="the default")
    grep.add_argument("-s", "--case-sensitive", action="store_true", help="match case exactly")
    grep.add_argument("-E", "--regex", action="store_true", help="a regular expression")
    grep.add_argument("--since", metavar="DATE", help="only matches from DATE on (YYYY-MM-DD)")
    grep.add_argument("--until", metavar="DATE", help="only matches up to DATE (inclusive)")
    grep.set_defaults(func=cmd_grep)
    versions = memory_sub.add_parser("versions", help="list MEMORY.md's versions")
    versions.set_defaults(func=cmd_versions)
    restore = memory_sub.add_parser("restore", help="make version N the current MEMORY.md")
    restore.add_argument("number", type=int, metavar="N")
    restore.set_defaults(func=cmd_restore)
    log = sub.add_parser("log", help="each session's consolidation, pending ones, per model")
    log.set_defaults(func=cmd_log)
    doctor = sub.add_parser("doctor", help="check keyring, folders, keys, pending, config")
    doctor.set_defaults(func=cmd_doctor)
