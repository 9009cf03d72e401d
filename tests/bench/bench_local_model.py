"""A real small model saving memory: SmolLM2-135M on llama.cpp's server, on this machine.

Consolidates the same 8-message session ten times with structured output (a JSON schema
the server turns into a grammar) and ten times without (save_memory as a forced tool
call), and prints how often Kept had a change it could keep (held for review: a local
model's change waits for the user), how many replies it refused (an edit or a history entry
not grounded in the session, template junk…), and the seconds per consolidation. Skipped,
with the reason, when `make llama` has not been run.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
import tomllib
from pathlib import Path

from catalog import Catalog, KeyStore, Kind
from catalog.config import parse_catalog_config
from memory import MemoryStore, consolidate_pending
from tests.llama_server import LlamaServer, why_unavailable
from tests.support import pending_session

RUNS = int(os.environ.get("KEPT_BENCH_RUNS", "10"))
SESSION = [
    ("user", "Hi, I'm Ana. I live in Zurich and work as a nurse."),
    ("assistant", "Nice to meet you, Ana! How can I help?"),
    ("user", "I'm learning Japanese. Can you suggest a daily routine?"),
    ("assistant", "Sure: 15 minutes of kana, 10 of vocabulary, and one short podcast."),
    ("user", "I prefer short answers, please."),
    ("assistant", "Got it: short answers from now on."),
    ("user", "Also, my cat is called Miso."),
    ("assistant", "Miso is a lovely name for a cat!"),
]


def _once(server: LlamaServer, structured: str) -> tuple[bool, float, int, str, int]:
    with tempfile.TemporaryDirectory() as data:
        os.environ["KEPT_DATA_DIR"] = data
        config = parse_catalog_config(
            tomllib.loads(server.config(f'structured_output = "{structured}"\n'))
        )
        catalog = Catalog(config=config, keys=KeyStore(environ={}))
        store = MemoryStore()
        pending_session(
            store,
            [{"role": r, "content": c, "time": "2026-11-20T09:15:00+00:00"} for r, c in SESSION],
        )
        started = time.perf_counter()
        (result,) = asyncio.run(consolidate_pending(store, catalog))
        elapsed = time.perf_counter() - started
        tokens = sum(a.completion_tokens for a in result.attempts)
        why = (
            ""
            if result.saved
            else (result.attempts[-1].reason if result.attempts else result.reason)
        )
        kept = result.saved or result.proposed
        if kept:
            why = ""
        if any(a.kind is Kind.CONTEXT_WINDOW for a in result.attempts) and not why:
            why = "kept after a cut-off reply"
        refused = sum(a.kind is Kind.REFUSED_EDIT for a in result.attempts)
        return kept, elapsed, tokens, why, refused


def main() -> None:
    problem = why_unavailable()
    if problem:
        print(f"   skipped: {problem}")
        return
    with LlamaServer(log=Path(tempfile.gettempdir()) / "kept-bench-llama.log") as server:
        print(
            f"   SmolLM2-135M-Instruct Q4_1, n_ctx {server.n_ctx}, 2 threads; "
            f"{len(SESSION)}-message session, {RUNS} runs each"
        )
        print(
            f"   {'mode':<26} {'kept':>7} {'refused':>8} {'median s':>9} {'max s':>7} {'tokens':>7}"
        )
        for label, mode in (
            ("structured output (auto)", "auto"),
            ("forced tool call (off)", "off"),
        ):
            runs = [_once(server, mode) for _ in range(RUNS)]
            kept = sum(r[0] for r in runs)
            refused = sum(r[4] for r in runs)
            seconds = [r[1] for r in runs]
            print(
                f"   {label:<26} {kept:>3}/{RUNS:<3} {refused:>8} "
                f"{statistics.median(seconds):>9.1f} {max(seconds):>7.1f} "
                f"{statistics.median(r[2] for r in runs):>7.0f}",
                flush=True,
            )
            reasons = sorted({r[3] for r in runs if r[3]})
            for reason in reasons[:3]:
                print(f"      e.g. {reason[:110]}")
