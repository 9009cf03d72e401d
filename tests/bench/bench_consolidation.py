"""End-to-end consolidation of a 60-message multilingual session on an instant fake provider.

Prints the median wall time of `consolidate` (prompt, model call, evidence checks, atomic
commit with fsyncs) beside a baseline in the same run: the bare transport call with the
same prompt. Then the same consolidation with the second opinion (a judge request to the
next model of the chain) beside it without: time, tokens and cost. The fake answers at
once, so the time it adds is one more round trip through litellm; on a hosted model the
judge's few output tokens against the consolidation's say more (latency follows them).
Then the prompt's tokens against the transcript's own tokens.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from catalog import Catalog, complete
from catalog.llm import litellm
from memory import MemorySettings, MemoryStore, consolidate
from memory.consolidation.prompt import SAVE_MEMORY_CHOICE, SAVE_MEMORY_TOOL
from tests.fakes.provider import FakeProvider, tool_call
from tests.support import FAST_POLICY, fake_catalog, pending_session

LINES = [
    ("user", "Can you help me plan a trip to Lisbon in March? I like quiet places."),
    ("assistant", "Of course! Alfama and Graça are quieter at night; here is a plan…"),
    ("user", "Merci ! Et pour manger, des restaurants végétariens près du Tejo ?"),
    ("assistant", "Bien sûr : essayez *Ao 26* et *Jardim dos Sentidos*."),
    ("user", "来週は東京に出張します。おすすめのホテルは？"),
    ("assistant", "静かな場所なら、清澄白河や谷中のホテルがおすすめです。"),
    ("user", "Ich brauche auch eine Packliste für Regenwetter."),
    ("assistant", "Regenjacke, wasserdichte Schuhe, ein kleiner Schirm und Ersatzsocken."),
    ("user", "¿Y cuánto cuesta el metro en Lisboa?"),
    ("assistant", "Un viaje sencillo cuesta unos 1,80 €; la tarjeta Viva Viagem ayuda."),
]
RUNS = 15
# What a good model would save from this session: grounded in what the user said.
SAVE = {
    "history_entry": "Planned a quiet trip to Lisbon in March and asked about food near the Tejo.",
    "edits": [
        {
            "op": "add",
            "line": "Likes quiet places",
            "section": "About the user",
            "reason": "-",
            "evidence": [{"message": 1, "quote": "I like quiet places"}],
        },
        {
            "op": "add",
            "line": "Plans a trip to Lisbon in March",
            "reason": "said so",
            "evidence": [{"message": 1, "quote": "a trip to Lisbon in March"}],
        },
    ],
}


def messages() -> list[dict[str, str]]:
    return [
        {"role": role, "content": f"{content} ({i})"} for i in range(6) for role, content in LINES
    ]


def main() -> None:
    count = litellm().token_counter
    session = messages()
    transcript_tokens = sum(count(model="gpt-4o", text=m["content"]) for m in session)
    with FakeProvider() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.default = tool_call("save_memory", SAVE)
        catalog = fake_catalog(fake)
        end_to_end: list[float] = []
        prompt_tokens = 0
        alone = MemorySettings(second_opinion=False)
        for run in range(RUNS):
            store = MemoryStore(Path(tmp) / f"run{run}", settings=alone).ensure()
            journal = pending_session(store, session)
            started = time.perf_counter()
            result = asyncio.run(
                consolidate(store, catalog, journal, journal.pending[0], policy=FAST_POLICY)
            )
            end_to_end.append(time.perf_counter() - started)
            assert result.saved, result.reason
            if run == 0:
                sent = fake.requests[-1].body["messages"]
                prompt_tokens = count(model="gpt-4o", messages=sent) + count(
                    model="gpt-4o", text=json.dumps(SAVE_MEMORY_TOOL)
                )
        baseline: list[float] = []
        for _ in range(RUNS):
            started = time.perf_counter()
            asyncio.run(
                complete(
                    catalog,
                    "llama-3.3-70b-versatile",
                    sent,
                    tools=[SAVE_MEMORY_TOOL],
                    tool_choice=SAVE_MEMORY_CHOICE,
                    policy=FAST_POLICY,
                )
            )
            baseline.append(time.perf_counter() - started)
        judged = [_judged(catalog, Path(tmp) / f"judged{run}", session) for run in range(RUNS)]
    e2e, base = statistics.median(end_to_end), statistics.median(baseline)
    print(
        f"session: {len(session)} messages in 5 languages, {transcript_tokens:,} tokens "
        f"of text; {RUNS} runs; fsync on {os.uname().sysname}"
    )
    print(f"{'':36} {'median ms':>10}")
    print(f"{'transport call alone (baseline)':36} {base * 1000:10.1f}")
    print(f"{'consolidate end to end':36} {e2e * 1000:10.1f}")
    print(f"{'business layer + commit overhead':36} {(e2e - base) * 1000:10.1f}")
    with_judge = statistics.median(t for t, _ in judged)
    print(f"{'with the second opinion':36} {with_judge * 1000:10.1f}")
    print(f"{'second opinion, time added':36} {(with_judge / e2e - 1):10.0%}")
    tokens = judged[0][1]
    for purpose, (sent_tokens, out_tokens, cost) in tokens.items():
        print(f"{purpose:36} {sent_tokens:6,} in {out_tokens:5,} out  ${cost:.5f} (gpt-4.1-mini)")
    print(
        f"prompt tokens {prompt_tokens:,} vs transcript tokens {transcript_tokens:,}: "
        f"x{prompt_tokens / transcript_tokens:.2f}"
    )


def _judged(
    catalog: Catalog, root: Path, session: list[dict[str, str]]
) -> tuple[float, dict[str, tuple[int, int, float]]]:
    """One consolidation with the second opinion: its time, and per request kind the
    tokens sent and written and what they would cost on gpt-4.1-mini."""
    store = MemoryStore(root).ensure()
    journal = pending_session(store, session)
    started = time.perf_counter()
    result = asyncio.run(
        consolidate(store, catalog, journal, journal.pending[0], policy=FAST_POLICY)
    )
    took = time.perf_counter() - started
    assert result.saved, result.reason
    out: dict[str, tuple[int, int, float]] = {}
    cost = litellm().cost_per_token
    for record in store.read_log():
        if record.get("outcome") not in ("ok",):
            continue
        kind = "judge request" if record.get("purpose") else "consolidation request"
        sent, written = int(record.get("prompt_tokens", 0)), int(record.get("completion_tokens", 0))
        dollars = sum(cost(model="gpt-4.1-mini", prompt_tokens=sent, completion_tokens=written))
        out[kind] = (sent, written, dollars)
    return took, out
