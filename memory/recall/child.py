"""A regular expression's search, in a child process.

A regular expression is the user's own program, and Python's `re` cannot be interrupted
while it matches (no signal, no thread can stop `(a+)+$` on a long line of "a"s): it runs in
a child process, which is ended when the search is cancelled or takes longer than its time.
A literal needs none of this: it is found in linear time, in the caller's process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memory.recall.pattern import Match, Pattern, Scope
from memory.recall.places import Places

if TYPE_CHECKING:
    from memory.data.store import MemoryStore

_BATCH = 100  # matches sent from the child at a time
# The child: its arguments come pickled on stdin (plain values: the child can import Kept's
# modules only once it has the path), its matches go pickled to stdout.
_CHILD = (
    "import pickle, sys; args = pickle.load(sys.stdin.buffer); sys.path[:] = args[0]; "
    "from memory.recall.child import _child_main; _child_main(*args[1:])"
)


def grep_in_child(
    store: MemoryStore | Places,
    pattern: Pattern,
    scope: Scope,
    *,
    seconds: float,
    cancelled: Callable[[], bool] | None,
    errors: list[str] | None,
) -> Iterator[Match]:
    """grep with a regex in a child Python (a plain subprocess: forking a threaded app is
    unsafe, and multiprocessing needs a real stderr, which a running Textual app has not),
    its matches streamed back in batches; the child is killed when the caller stops
    reading, cancels, or the time is up."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdin is not None and child.stdout is not None
    arguments = (list(sys.path), str(store.root), pattern.text, pattern.ignore_case, seconds)
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
    reader = threading.Thread(target=_receive, args=(child.stdout, inbox), daemon=True)
    reader.start()
    deadline = time.monotonic() + seconds
    try:
        with contextlib.suppress(OSError), child.stdin:  # it died at once: said below
            pickle.dump((*arguments, dataclasses.asdict(scope)), child.stdin)
        while True:
            if cancelled is not None and cancelled():
                return
            if time.monotonic() > deadline:
                if errors is not None:
                    errors.append(
                        f"the regular expression {pattern.text!r} took more than "
                        f"{seconds:g} s and was stopped; try a simpler one, or a plain word"
                    )
                return
            try:
                kind, value = inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "matches":
                yield from value
            elif kind == "errors":
                if errors is not None:
                    errors.extend(value)
            elif kind == "done":
                return
            else:  # the child died without a word
                if errors is not None:
                    errors.append("the search stopped unexpectedly")
                return
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        reader.join(5)
        child.stdout.close()


def _receive(stream: IO[bytes], inbox: queue.Queue[tuple[str, Any]]) -> None:
    """The child's messages, one pickle each, until it ends."""
    try:
        while True:
            inbox.put(pickle.load(stream))
    except (EOFError, OSError, pickle.UnpicklingError):
        inbox.put(("ended", None))


def _child_main(
    root: str, text: str, ignore_case: bool, seconds: float, scope: dict[str, Any]
) -> None:
    """The child's side: the same search, over the same folder, sent back in batches. It
    bounds itself too: should its parent be killed before it could end the child, the
    kernel ends it once it has used its CPU time (no lock held by `re` can stop that)."""
    with contextlib.suppress(ImportError, ValueError, OSError):  # not on Windows
        import resource

        limit = math.ceil(seconds) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    out = sys.stdout.buffer

    def send(kind: str, value: object) -> None:
        pickle.dump((kind, value), out)
        out.flush()

    pattern = Pattern(text, regex=True, ignore_case=ignore_case)
    errors: list[str] = []
    batch: list[Match] = []
    from memory.recall.scan import scan

    found = scan(Places(Path(root)), pattern, Scope(**scope), errors)
    for match in found:
        batch.append(match)
        if len(batch) >= _BATCH:
            send("matches", batch)
            batch = []
    send("matches", batch)
    send("errors", errors)
    send("done", None)
