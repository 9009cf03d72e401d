"""The health book's lock: the OS's own, on every platform Kept runs on, and never left
held by a process that died."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from catalog import Attempt, Outcome
from catalog.health import HealthBook

ROOT = Path(__file__).parents[2]


def test_the_book_loads_where_fcntl_does_not_exist(tmp_path: Path) -> None:
    """Windows has no fcntl: the book must still load and keep its file."""
    code = (
        "import sys\nsys.modules['fcntl'] = None\nfrom pathlib import Path\n"
        "from catalog import Attempt, Outcome\nfrom catalog.health import HealthBook\n"
        "HealthBook(Path(sys.argv[1])).observe(Attempt('m', 'openai', Outcome.OK, latency=0.1))\n"
    )
    path = tmp_path / "health.json"
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert set(json.loads(path.read_text())["models"]) == {"m"}


def test_a_process_that_dies_holding_the_lock_does_not_lock_the_book(tmp_path: Path) -> None:
    code = (
        "import sys, time\nfrom filelock import FileLock\n"
        "lock = FileLock(sys.argv[1])\nlock.acquire()\nprint('held', flush=True)\n"
        "time.sleep(600)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / ".health.json.lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    finally:
        holder.kill()
        holder.wait(timeout=120)
    book = HealthBook(tmp_path / "health.json")
    writer = threading.Thread(
        target=book.observe, args=(Attempt("m", "openai", Outcome.OK, latency=0.1),)
    )
    writer.start()
    writer.join(timeout=120)
    assert not writer.is_alive(), "the book stayed locked after its holder died"
    assert book.get("m").answers == 1
