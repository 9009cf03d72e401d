"""`kept memory grep` over 100 MB of history beside `grep -F` on the same files, same run."""

from __future__ import annotations

import os
import random
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


def timed(command: list[str], env: dict[str, str], out: Path) -> tuple[float, int, int]:
    """Median seconds, exit code and lines written. Output goes to a file, not /dev/null:
    GNU grep stops at the first match when it sees its output is /dev/null."""
    timings, code = [], 0
    for _ in range(RUNS):
        with open(out, "wb") as sink:
            started = time.perf_counter()
            code = subprocess.run(command, stdout=sink, env=env).returncode
            timings.append(time.perf_counter() - started)
    with open(out, "rb") as f:
        lines = sum(1 for _ in f)
    return statistics.median(timings), code, lines


def main() -> None:
    kept = [str(Path(sys.executable).with_name("kept")), "memory", "grep"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = [str(p) for p in build(root)]
        size = sum(os.path.getsize(p) for p in files) / 2**20
        env = {**os.environ, "KEPT_DATA_DIR": tmp, "KEPT_CONFIG_DIR": str(root / "config")}
        print(f"{size:.0f} MB in {len(files)} files; median of {RUNS} runs, each a new process")
        print(f"{'search':38} {'lines':>7} {'grep':>9} {'kept':>9} {'ratio':>7}  (goal ≤ x1.5)")
        out = root / "out.txt"
        for label, flags, pattern in (
            ("rare literal (quokka)", [], "quokka"),
            ("rare literal, ignore case (QUOKKA)", ["-i"], "QUOKKA"),
            ("common literal (piano museum)", [], "piano museum"),
            ("regex (quok+a)", ["-E"], "quok+a"),
        ):
            base, _, expected = timed(
                [
                    "grep",
                    "-F" if "-E" not in flags else "-E",
                    *[f for f in flags if f != "-E"],
                    pattern,
                    *files,
                ],
                env,
                out,
            )
            ours, code, lines = timed([*kept, *flags, pattern], env, out)
            assert code == 0 and lines == expected, (code, lines, expected)
            print(f"{label:38} {lines:7,} {base:8.3f}s {ours:8.3f}s {ours / base:6.2f}x")
