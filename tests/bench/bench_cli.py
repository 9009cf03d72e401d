"""Start-up of each CLI verb: a new process each, median of 5, and whether it loaded litellm.

Baseline in the same run: the interpreter alone (`python -c pass`). A verb that sends no
request must not pay for litellm; `kept consolidate` with a pending session does (shown
beside the import of litellm alone).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.fakes.provider import FakeProvider, tool_call
from tests.support import FAKE_GATEWAYS, SAMPLE_MESSAGES, fake_keys, save_args

ROOT = Path(__file__).parents[2].parent
RUNS = 5
CHILD = (
    "import sys\nfrom app.cli.main import main\nrc = main(sys.argv[1:])\n"
    "print('litellm' in sys.modules, file=sys.stderr)\n"
)


Row = tuple[str, list[str], dict[str, str], Callable[[], None] | None]


def _time(
    args: list[str], env: dict[str, str], before: Callable[[], None] | None = None
) -> tuple[float, bool]:
    timings, loaded = [], False
    for _ in range(RUNS):
        if before is not None:
            before()
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True
        )
        timings.append(time.perf_counter() - started)
        loaded = done.stderr.strip().endswith("True")
    return statistics.median(timings), loaded


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        folder = Path(tmp)
        config = folder / "config"
        config.mkdir()
        (config / "config.toml").write_text(
            "".join(f'[gateways.{g}]\nbase_url = "{fake.base_url(g)}"\n\n' for g in FAKE_GATEWAYS)
        )
        fake.default = tool_call("save_memory", save_args())
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(KEPT_DATA_DIR=str(folder / "data"), KEPT_CONFIG_DIR=str(config))
        transcript = folder / "chat.jsonl"
        transcript.write_text("".join(json.dumps(m) + "\n" for m in SAMPLE_MESSAGES))
        with_keys = {**env, **fake_keys()}

        def one_pending() -> None:
            subprocess.run(
                [sys.executable, "-m", "app.cli.main", "import", str(transcript)],
                env=env,
                cwd=ROOT,
                capture_output=True,
                check=True,
            )

        rows: list[Row] = [
            ("python -c pass (baseline)", ["-c", "pass"], env, None),
            (
                "python -c 'import litellm'",
                ["-c", "from catalog.llm import litellm; litellm()"],
                env,
                None,
            ),
        ]
        verbs = [
            ["log"],
            ["memory", "show"],
            ["memory", "versions"],
            ["memory", "grep", "Ana"],
            ["import", str(transcript)],
            ["doctor"],
            ["consolidate"],
        ]
        rows += [
            (
                f"kept {' '.join(v[:2]) if v[0] != 'import' else 'import FILE'}",
                ["-c", CHILD, *v],
                env,
                None,
            )
            for v in verbs
        ]
        rows[-1] = ("kept consolidate, pending, no key", *rows[-1][1:])
        rows.append(
            (
                "kept consolidate, 1 pending, sends",
                ["-c", CHILD, "consolidate"],
                with_keys,
                one_pending,
            )
        )
        print(f"{'verb':38} {'median s':>9} {'litellm':>8}")
        for label, args, environment, before in rows:
            seconds, loaded = _time(args, environment, before)
            shown = ("yes" if loaded else "no") if args[1] == CHILD else ""
            print(f"{label:38} {seconds:9.3f} {shown:>8}", flush=True)
