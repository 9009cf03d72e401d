"""Time to a result when the primary fails, beside the retry policy's theoretical minimum.

Baseline, in the same run: a healthy primary. The default policy is used as shipped (with
a healthy fallback, one short retry of the primary); the deadline is shortened to keep the
run short.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import replace

from catalog import ModelEntry, RetryPolicy, complete
from tests.fakes.provider import FakeProvider, hang, http_error, text
from tests.support import fake_catalog

MESSAGES = [{"role": "user", "content": "ping"}]
POLICY = replace(RetryPolicy(), attempt_deadline=2.0, stall_timeout=2.0)
ENTRIES = (
    ModelEntry(
        "primary",
        "primary",
        "fast",
        "",
        "groq",
        fallback="backup",
        context_window=100_000,
        input_per_mtok=1.0,
        output_per_mtok=1.0,
    ),
    ModelEntry(
        "backup",
        "backup",
        "fast",
        "",
        "openai",
        context_window=100_000,
        input_per_mtok=1.0,
        output_per_mtok=1.0,
    ),
)


def _time(fake: FakeProvider, stream: bool) -> tuple[float, str]:
    catalog = fake_catalog(fake, entries=ENTRIES)
    started = time.perf_counter()
    result = asyncio.run(complete(catalog, "primary", MESSAGES, stream=stream, policy=POLICY))
    elapsed = time.perf_counter() - started
    assert result.ok, result.reason
    return elapsed, result.model or "?"


def main() -> None:
    backoff_floor = min(POLICY.delay(0, None), POLICY.short_backoff)  # one short retry
    scenarios = [
        ("healthy primary (baseline)", None, 0.0),
        ("primary answers 500 every time", http_error(500), backoff_floor),
        ("primary answers 529 every time", http_error(529), backoff_floor),
        ("primary never answers", hang(), POLICY.attempt_deadline),
    ]
    print(
        f"policy: one retry of {POLICY.short_backoff:g} s while a healthy fallback "
        f"follows, deadline {POLICY.attempt_deadline:g} s"
    )
    print(
        f"{'scenario':34} {'mode':6} {'answered by':11} {'median s':>9} {'floor s':>8} "
        f"{'overhead s':>10}"
    )
    with FakeProvider() as fake:
        baseline: dict[bool, float] = {}
        for label, fault, floor in scenarios:
            for stream in (False, True):
                runs = 3 if fault is None else 1
                timings = []
                for _ in range(runs):
                    fake.reset()
                    fake.default = text("pong")
                    if fault is not None:
                        fake.set_default("primary", fault)
                    elapsed, model = _time(fake, stream)
                    timings.append(elapsed)
                median = statistics.median(timings)
                if fault is None:
                    baseline[stream] = median
                overhead = median - floor - baseline[stream]
                mode = "stream" if stream else "plain"
                print(
                    f"{label:34} {mode:6} {model:11} {median:9.3f} {floor:8.3f} {overhead:10.3f}",
                    flush=True,
                )
    print(
        "floor: the policy's theoretical minimum (backoff sleeps, or the deadline); "
        "overhead: median - floor - healthy baseline"
    )
