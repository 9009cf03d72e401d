"""litellm's import leaves hundreds of thousands of objects for the life of the process: a
full garbage collection must not walk them again, or a long streamed reply (whose chunks
litellm keeps) freezes the screen at every one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]

CHILD = (
    "import gc\nfrom catalog.llm import litellm\nlitellm()\n"
    "print(gc.get_freeze_count(), len(gc.get_objects()))\n"
)


def test_a_full_collection_does_not_walk_litellms_objects_again() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    frozen, walked = (int(n) for n in done.stdout.split())
    assert frozen > 100_000  # litellm's modules, classes and tables
    assert walked < frozen // 4, f"a full collection still walks {walked:,} objects"
