"""`kept import --from chatgpt` on a large conversations.json: time, and peak memory beside
the file's size (the export is streamed, never loaded whole). KEPT_BENCH_MB sets the size
(default 200)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.bench_search import WORDS

CHILD = """
import resource, sys, time
from app.cli.main import main
started = time.perf_counter()
code = main(["import", "--from", "chatgpt", sys.argv[1]])
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
      code, file=sys.stderr)
"""


def build(path: Path, size: int) -> int:
    """A ChatGPT export of about `size` bytes, written a conversation at a time."""
    rng = random.Random(3)
    count, written = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        while written < size:
            at = 1_600_000_000 + count * 3600
            nodes: dict[str, dict[str, Any]] = {
                "root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}
            }
            for i in range(20):
                role = "user" if i % 2 == 0 else "assistant"
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 160)))
                nodes[f"m{i}"] = {
                    "id": f"m{i}",
                    "parent": "root" if i == 0 else f"m{i - 1}",
                    "children": [f"m{i + 1}"] if i < 19 else [],
                    "message": {
                        "id": f"m{i}",
                        "author": {"role": role, "metadata": {}},
                        "create_time": at + i,
                        "content": {"content_type": "text", "parts": [words]},
                        "recipient": "all",
                        "metadata": {},
                    },
                }
            text = json.dumps(
                {
                    "title": f"Chat {count}",
                    "create_time": at,
                    "conversation_id": f"c-{count}",
                    "mapping": nodes,
                    "current_node": "m19",
                }
            )
            f.write(("," if count else "") + text)
            written += len(text)
            count += 1
        f.write("]")
    return count


def main() -> None:
    size = int(float(os.environ.get("KEPT_BENCH_MB", "200")) * 2**20)
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        count = build(export, size)
        mb = export.stat().st_size / 2**20
        env = {
            **os.environ,
            "KEPT_DATA_DIR": str(Path(tmp) / "data"),
            "KEPT_CONFIG_DIR": str(Path(tmp) / "config"),
        }
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(export)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - started
        seconds, rss_kib, code = out.stderr.split()[-3:]
        print(
            f"import of a {mb:.0f} MB ChatGPT export ({count:,} conversations): "
            f"{float(seconds):.1f} s ({wall:.1f} s with start-up), exit {code}; peak "
            f"memory {int(rss_kib) / 1024:.0f} MiB for a {mb:.0f} MB file (streamed)"
        )


if __name__ == "__main__":
    main()
