"""`kept memory grep` over 100 MB of history beside `grep` on the same files, same run: with
its search index, and with none (every file read)."""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE = 100 * 1024 * 1024
RUNS = 5
WORDS = [
    "tea",
    "coffee",
    "Lisbon",
    "Zürich",
    "meeting",
    "budget",
    "garden",
    "piano",
    "invoice",
    "trip",
    "doctor",
    "recipe",
    "novel",
    "bicycle",
    "concert",
    "deadline",
    "python",
    "review",
    "birthday",
    "museum",
]


def build(root: Path) -> list[Path]:
    """Monthly archives of one-paragraph entries, about 100 MB, and a HISTORY.md."""
    rng = random.Random(7)
    archive = root / "history"
    archive.mkdir(parents=True)
    written, files, month = 0, [], 0
    while written < SIZE:
        month += 1
        lines = []
        for day in range(1, 29):
            for hour in range(24):
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60)))
                lines.append(
                    f"[{2000 + month // 12:04d}-{month % 12 + 1:02d}-{day:02d} "
                    f"{hour:02d}:00] {words}.\n\n"
                )
        if month % 50 == 0:
            lines.append("[2030-01-01 00:00] The rare word quokka appears here.\n\n")
        data = "".join(lines).encode()
        path = archive / f"{2000 + month // 12:04d}-{month % 12 + 1:02d}.md"
        path.write_bytes(data)
        files.append(path)
        written += len(data)
    (root / "HISTORY.md").write_text("[2031-01-01 10:00] Recent: tea with Ana.\n\n")
    return [*files, root / "HISTORY.md"]


def timed(
    command: list[str], env: dict[str, str], out: Path, runs: int = RUNS
) -> tuple[float, int, int]:
    """Median seconds, exit code and lines written. Output goes to a file, not /dev/null:
    GNU grep stops at the first match when it sees its output is /dev/null."""
    timings, code = [], 0
    for _ in range(runs):
        with open(out, "wb") as sink:
            started = time.perf_counter()
            code = subprocess.run(command, stdout=sink, env=env).returncode
            timings.append(time.perf_counter() - started)
    with open(out, "rb") as f:
        lines = sum(1 for _ in f)
    return statistics.median(timings), code, lines


def interleaved(
    commands: list[tuple[list[str], dict[str, str]]], out: Path
) -> list[tuple[float, int, int]]:
    """`timed` for several commands, run in turn RUNS times, so that all of them see the
    same machine (a busy one changes from minute to minute)."""
    timings: list[list[float]] = [[] for _ in commands]
    results: list[tuple[int, int]] = [(0, 0)] * len(commands)
    for _ in range(RUNS):
        for number, (command, env) in enumerate(commands):
            seconds, code, lines = timed(command, env, out, runs=1)
            timings[number].append(seconds)
            results[number] = (code, lines)
    return [(statistics.median(t), *r) for t, r in zip(timings, results, strict=True)]


def kept_against_grep(
    root: Path, targets: list[str], cases: list[tuple[str, list[str], list[str], str]]
) -> None:
    """Each search as `grep -r` over `targets` and as `kept memory grep` over `root`, in
    turn: kept with its search index up to date, and kept over a copy of the files in
    a folder with no index, whose builder's lock this process holds so that none is built:
    every file is read, as before the index. A case is (label, grep's flags, kept's
    flags, pattern)."""
    from memory.data.files import locked
    from memory.recall import index

    kept = [str(Path(sys.executable).with_name("kept")), "memory", "grep"]
    env = {**os.environ, "KEPT_DATA_DIR": str(root), "KEPT_CONFIG_DIR": str(root / "config")}
    out = root.parent / f"{root.name}-out.txt"
    bare = root.parent / f"{root.name}-no-index"
    for path in _files(root):
        linked = bare / path.relative_to(root)
        linked.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, linked)  # a copy: a hard link would move the file's ctime
    empty = root.parent / f"{root.name}-empty"
    index.remove(root)
    # The first search with no index answers by the scan and starts the build.
    started = time.perf_counter()
    first, _, _ = timed([*kept, "-s", "quokka"], env, out, runs=1)
    while not (root / index.INDEX).exists():  # the builder has taken its lock
        time.sleep(0.01)
    with locked(root / index.LOCK):  # and let it go: the build is done
        built = time.perf_counter() - started
    # Files written too recently for the build to trust, if any: once they are past
    # SETTLE_SECONDS (a small folder is built sooner than that).
    time.sleep(max(0.0, index.SETTLE_SECONDS - (time.perf_counter() - started)) + 0.1)
    index.refresh(root)
    assert index.lookup(root, _files(root), {}).unindexed == 0
    size = sum(
        (root / (index.INDEX + s)).stat().st_size
        for s in ("", "-wal")
        if (root / (index.INDEX + s)).exists()
    )
    print(
        f"first search with no index: {first:.3f} s (the scan; it starts the build); the "
        f"index was built in the background {built:.1f} s after it started: {size / 2**20:.1f} MB"
    )
    (start_up, _, _), *_ = interleaved(
        [([*kept, "quokka"], {**env, "KEPT_DATA_DIR": str(empty)})], out
    )
    print(f"kept memory grep in an empty folder (start-up alone): {start_up:.3f} s")
    print(
        f"{'search':36} {'grep lines':>10} {'kept lines':>10} {'grep':>8} {'kept':>8} "
        f"{'ratio':>6}  {'no index':>9} {'ratio':>6}"
    )
    floors: list[tuple[str, float, float]] = []
    with locked(bare / index.LOCK):
        for label, grep_flags, flags, pattern in cases:
            (base, _, expected), (ours, code, lines), (scan, _, scan_lines) = interleaved(
                [
                    (["grep", "-r", *grep_flags, pattern, *targets], env),
                    ([*kept, *flags, pattern], env),
                    ([*kept, *flags, pattern], {**env, "KEPT_DATA_DIR": str(bare)}),
                ],
                out,
            )
            assert code == 0 and lines == expected == scan_lines, (label, lines, expected)
            print(
                f"{label:36} {expected:10,} {lines:10,} {base:7.3f}s {ours:7.3f}s "
                f"{ours / base:5.2f}x  {scan:8.3f}s {scan / base:5.2f}x"
            )
            if expected > 1000:  # a common word: what no scan in Python can go below
                floor = bytes_alone(_files(root), pattern, "i" in grep_flags[0])
                floors.append((label, floor, base))
    print("(ratio: kept's time over grep's; goal ≤ 1.0 for a rare word, ≤ 1.5 for the rest)")
    for label, floor, base in floors:
        print(
            f"{label}: Python's pass over the bytes alone (read, find, count lines; no "
            f"start-up, no match made, nothing printed) {floor:.3f}s, {floor / base:.2f}x grep"
        )


def bytes_alone(files: list[Path], pattern: str, fold: bool) -> float:
    """Median seconds of what any scan in Python pays per byte, as kept's does: each file
    read, ASCII-lowercased for ignore-case, the literal found (a line at a time) and the
    line breaks before it counted."""
    needle = pattern.lower().encode() if fold else pattern.encode()
    timings = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for path in files:
            data = path.read_bytes()
            haystack = data.lower() if fold else data
            counted, hit = 0, haystack.find(needle)
            while hit >= 0:
                start = haystack.rfind(b"\n", 0, hit) + 1
                data.count(b"\n", counted, start)
                counted, end = start, haystack.find(b"\n", hit)
                hit = haystack.find(needle, end) if end >= 0 else -1
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def _files(root: Path) -> list[Path]:
    from memory.recall.search import Places, searched_files

    return searched_files(Places(root))


CASES = [
    ("rare literal (quokka)", ["-F"], ["-s"], "quokka"),
    ("rare literal, ignore case (QUOKKA)", ["-Fi"], [], "QUOKKA"),
    ("common literal (piano museum)", ["-F"], ["-s"], "piano museum"),
    ("common, ignore case (PIANO MUSEUM)", ["-Fi"], [], "PIANO MUSEUM"),
    ("regex (quok+a)", ["-E"], ["-s", "-E"], "quok+a"),
]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        files = build(root)
        size = sum(os.path.getsize(p) for p in files) / 2**20
        print(
            f"{size:.0f} MB of history in {len(files)} files; median of {RUNS} runs, each a "
            "new process"
        )
        kept_against_grep(root, [str(root / "history"), str(root / "HISTORY.md")], CASES)
