"""`kept sync init REMOTE`, `kept sync`, `kept sync status`: one memory on every machine,
through any git remote the user can push to (their own credentials; Kept stores none)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from app.cli.errors import USAGE, CliError, os_error

if TYPE_CHECKING:
    from app.cli.context import Context
    from memory import MemoryStore
    from memory.sync.gitsync import SyncReport

NOT_SET_UP = (
    "kept sync: this data folder is not set up for sync yet: run `kept sync init REMOTE` "
    "with a git remote you can push to (another machine over ssh, a server, a private "
    "repository)."
)


def describe(report: SyncReport) -> str:
    """One line: what came in, what went out, what waits for the user."""
    parts = []
    if report.devices:
        parts.append(f"merged changes from {', '.join(sorted(report.devices))}")
    if report.shared:
        parts.append(f"{', '.join(sorted(report.shared))} updated")
    if report.copies:
        noun = "copy" if report.copies == 1 else "copies"
        parts.append(f"{report.copies} conflict {noun} merged")
    if report.proposals:
        parts.append(
            f"{report.proposals} change{'s' if report.proposals != 1 else ''} both devices made "
            "to the same lines wait for you (`kept sync review`)"
        )
    parts.append("pushed" if report.pushed else "nothing to push")
    sentence = "; ".join(parts)
    return f"Synced: {sentence}."


def _run_sync(store: MemoryStore) -> int:
    from memory.sync.git import GitError, GitFailure
    from memory.sync.gitsync import SyncBusy, record_sync, sync

    try:
        report = sync(store)
    except SyncBusy as exc:
        raise CliError(f"kept sync: {exc}", 1) from None
    except GitError as exc:
        if exc.kind is GitFailure.NOT_A_REPO:
            raise CliError(NOT_SET_UP, USAGE) from None
        record_sync(store, None, str(exc))
        raise CliError(
            f"kept sync: {exc} Nothing was lost: the next `kept sync` catches up.", 1
        ) from None
    print(describe(report))
    return 0


def _copies_only(store: MemoryStore) -> int:
    """No git remote: merge the conflict copies a sync tool left, if any (and bring the
    ignore files up to date: a sync tool may carry this folder)."""
    from memory.sync.copies_merge import merge_copies
    from memory.sync.ignore import write_ignore_files

    store.ensure()
    write_ignore_files(store.layout)
    done = merge_copies(store)
    for sentence in done.unreadable:
        print(f"warning: {sentence}")
    if not done.merged:
        print(
            "No conflict copies to merge. With a git remote, `kept sync init REMOTE` "
            "sets up sync; a file-sync tool (Syncthing, Dropbox) needs nothing more."
        )
        return 0
    held = f"; {done.proposals} wait for you (`kept sync review`)" if done.proposals else ""
    count = len(done.merged)
    print(f"Merged {count} conflict {'copy' if count == 1 else 'copies'}{held}.")
    return 0


def cmd_sync(args: argparse.Namespace, ctx: Context) -> int:
    from memory.sync.git import GitError

    try:
        return _sync_verb(args, ctx.store)
    except GitError as exc:  # git missing, or a repository it cannot read
        raise CliError(f"kept sync: {exc}", 1) from None


def _sync_verb(args: argparse.Namespace, store: MemoryStore) -> int:
    from memory.sync.git import GitError, Repo, redact

    if args.action == "init":
        if not args.remote:
            raise CliError("kept sync init: name the git remote to sync with.", USAGE)
        try:
            store.ensure()
            replaced = Repo(store.root).init(args.remote)
        except (GitError, OSError) as exc:
            raise CliError(f"kept sync init: {exc}", 1) from None
        was = f" (it synced with {redact(replaced)} before)" if replaced else ""
        print(f"This data folder syncs with {redact(args.remote)}{was} as device {store.device}.")
        return _run_sync(store)
    if args.action == "status":
        return cmd_status(store)
    if args.action == "review":
        return cmd_review(store, args.remote)
    if args.remote:
        raise CliError(f"kept sync: unknown action {args.action!r}.", USAGE)
    if not Repo(store.root).is_repo():
        return _copies_only(store)
    return _run_sync(store)


def cmd_status(store: MemoryStore) -> int:
    from app.words.sync import sync_lines
    from memory.sync.status import sync_status

    status = sync_status(store)
    lines = sync_lines(status)
    if not status.remote:
        lines.insert(0, f"This device is {status.device}; no git remote (`kept sync init REMOTE`).")
    if status.last is None:
        lines.append("Last sync here: never")
    print("\n".join(lines))
    return 0


def cmd_review(store: MemoryStore, decision: str | None) -> int:
    """Lines two devices changed differently: listed, or one decided ("take:ID"/"keep:ID")."""
    from memory.consolidation.review import unified
    from memory.sync.proposals import accept_sync, reject_sync, sync_proposals

    problems: list[str] = []
    waiting = {p.path.stem: p for p in sync_proposals(store, problems)}
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    if decision:
        verb, _, ident = decision.partition(":")
        chosen = waiting.get(ident)
        if verb not in ("take", "keep") or chosen is None:
            raise CliError(
                f"kept sync review: no choice {decision!r}; `kept sync review` lists them.", USAGE
            )
        try:
            (accept_sync if verb == "take" else reject_sync)(store, chosen)
        except OSError as exc:
            raise CliError(f"kept sync review: {os_error(exc)}", 1) from None
        kept = f"{chosen.device}'s lines" if verb == "take" else "this device's lines"
        print(f"{chosen.file} has {kept}.")
        return 0
    if not waiting:
        print("No choice waits: no lines were changed differently on two devices.")
        return 0
    for ident, proposal in waiting.items():
        text = store.read_memory() if proposal.file == "MEMORY.md" else store.read_instructions()
        ours, theirs = proposal.choices(text.text)
        print(f"{proposal.file}: this device and {proposal.device} changed the same lines.")
        print(unified(ours, theirs, "this device's", f"{proposal.device}'s"))
        print(f"  (`kept sync review take:{ident}` or `kept sync review keep:{ident}`)\n")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "sync",
        help="share memory with your other machines through a git remote",
        description="`kept sync init REMOTE` once per machine, then `kept sync` "
        "(fetch, merge, commit, push) whenever you like; `kept sync status` says where it "
        "stands; `kept sync review` shows lines two devices changed differently.",
    )
    parser.add_argument("action", nargs="?", choices=["init", "status", "review"], default=None)
    parser.add_argument(
        "remote",
        nargs="?",
        help="with init: the git remote (URL or path); with review: take:ID or keep:ID",
    )
    parser.set_defaults(func=cmd_sync)
