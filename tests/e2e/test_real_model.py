"""Kept's real code against a real model: SmolLM2-135M on llama.cpp's server, on loopback.

Slow by nature (a CPU model), so each test is short: a small context, a short session.
Skipped with the reason when the server is not installed (`make llama`; .ci/run does it).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator

import pytest

from catalog import Catalog, KeyStore, Kind, Outcome
from catalog.config import parse_catalog_config
from memory import MemorySettings, MemoryStore, consolidate_pending
from memory.message import Message
from tests.llama_server import MODEL_ALIAS, LlamaServer, why_unavailable
from tests.support import pending_session

if why_unavailable():
    pytest.skip(why_unavailable(), allow_module_level=True)

SESSION: list[Message] = [
    {
        "role": "user",
        "content": "Hi, I'm Ana and I live in Zurich.",
        "time": "2026-11-20T09:15:00+00:00",
    },
    {"role": "assistant", "content": "Nice to meet you, Ana!", "time": "2026-11-20T09:15:05+00:00"},
    {"role": "user", "content": "My cat is called Miso.", "time": "2026-11-20T09:16:00+00:00"},
    {"role": "assistant", "content": "Miso is a lovely name.", "time": "2026-11-20T09:16:05+00:00"},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with LlamaServer(n_ctx=2048, log=tmp_path_factory.mktemp("llama") / "server.log") as s:
        yield s


def local_catalog(server: LlamaServer, extra: str = "") -> Catalog:
    config = parse_catalog_config(tomllib.loads(server.config(extra)))
    assert config.problems == ()
    return Catalog(config=config, keys=KeyStore(environ={}))


# What a small model may be refused for: what it wrote, never invalid JSON (the grammar).
CONTENT = {Kind.CONTEXT_WINDOW, Kind.REFUSED_EDIT, Kind.REJECTED}
NEWCOMER = "# About me\n- Name: Ana Ribeiro\n- Lives in Zurich\n- Works as a nurse\n"
SESSIONS: list[list[Message]] = [
    SESSION,
    [
        {
            "role": "user",
            "content": "I started learning the cello.",
            "time": "2026-11-21T18:00:00+00:00",
        },
        {"role": "assistant", "content": "How exciting!", "time": "2026-11-21T18:00:05+00:00"},
        {
            "role": "user",
            "content": "My teacher is called Irene.",
            "time": "2026-11-21T18:01:00+00:00",
        },
        {"role": "assistant", "content": "Say hi to Irene.", "time": "2026-11-21T18:01:05+00:00"},
    ],
    [
        {
            "role": "user",
            "content": "Recipe idea for dinner with leeks?",
            "time": "2026-11-22T19:00:00+00:00",
        },
        {
            "role": "assistant",
            "content": "Leek and potato soup.",
            "time": "2026-11-22T19:00:05+00:00",
        },
    ],
]


async def test_a_newcomers_own_lines_survive_every_save_and_nothing_ungrounded_is_applied(
    server: LlamaServer,
) -> None:
    """The newcomer's case: a hand-written MEMORY.md, a /remember line, several sessions
    saved by SmolLM2 trusted outright (review_by_model: the strictest case). Each session is
    saved, held for review, or pending with its reason; never garbage applied."""
    from memory.consolidation.edits import normal
    from memory.consolidation.grounding import grounded
    from memory.settings import Review

    settings = MemorySettings(review_by_model={MODEL_ALIAS: Review.AFTER})
    store = MemoryStore(settings=settings).ensure()
    store.memory_path.write_text(NEWCOMER)
    store.remember("My cat is called Biscoito")
    mine = {normal(line) for line in [*NEWCOMER.splitlines()[1:], "My cat is called Biscoito"]}
    said: list[Message] = []
    for messages in SESSIONS:
        journal = pending_session(store, messages)
        said.extend(messages)
        # This session only: one refused earlier stays pending and waits for its retry.
        (result,) = await consolidate_pending(store, local_catalog(server), ids=[journal.id])
        for attempt in result.attempts:
            # The grammar leaves the model no way to write anything but the schema's JSON.
            assert attempt.outcome is Outcome.OK or attempt.kind in CONTENT, attempt
            assert "JSON" not in attempt.reason and "has no line" not in attempt.reason
        if not result.saved:
            assert store.find_session(journal.id).pending and result.reason
        lines = [s for s in store.memory_path.read_text().splitlines() if s.startswith("- ")]
        assert mine <= {normal(s) for s in lines}, store.memory_path.read_text()
        for line in lines:
            if normal(line) not in mine and not line.startswith("- Previously:"):
                assert grounded(line, said), line


async def test_chat_streams_a_reply_and_new_saves_the_session_or_keeps_it(
    server: LlamaServer,
) -> None:
    from app.main import KeptApp
    from app.settings import AppSettings, Settings
    from app.widgets.status_bar import StatusBar
    from tests.support import send, settle

    settings = Settings(AppSettings(model=MODEL_ALIAS), MemorySettings(), ())
    store = MemoryStore(settings=settings.memory)

    app = KeptApp(store=store, catalog=local_catalog(server), settings=settings)
    async with app.run_test() as pilot:
        await settle(pilot)
        await send(pilot, "Say hello in three words.")
        reply = app.session.messages[-1]
        assert reply["role"] == "assistant" and (reply["content"] or "").strip()
        assert reply["model"] == MODEL_ALIAS
        old = app.session.journal
        await pilot.press(*"/new", "enter")
        await settle(pilot)
        status = str(app.screen.query_one(StatusBar).render())
        journal = store.find_session(old.id)
        assert len(journal.messages) == 2  # never lost, whatever the model wrote
        failures = journal.failures.get(journal.pending[0]) if journal.pending else None
        if failures:  # not saved: the reason is shown and kept with it
            assert "Memory not saved yet" in status and failures[-1].reason
        elif journal.pending:  # saved as a change that waits for the user's yes
            assert "to review" in status, status
        else:
            assert "Memory saved (smollm2" in status
            assert store.history_entries()
