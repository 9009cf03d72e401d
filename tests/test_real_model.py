"""Kept's real code against a real model: SmolLM2-135M on llama.cpp's server, on loopback.

Slow by nature (a CPU model), so each test is short: a small context, a short session.
Skipped with the reason when the server is not installed (`make llama`; .ci/run does it).
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Iterator

import pytest

from catalog import Catalog, KeyStore, Kind, Outcome
from catalog.config import parse_catalog_config
from memory import MemorySettings, MemoryStore, consolidate_pending
from tests.llama_server import MODEL_ALIAS, LlamaServer, why_unavailable
from tests.support import pending_session

if why_unavailable():
    pytest.skip(why_unavailable(), allow_module_level=True)

SESSION = [
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
def server(tmp_path_factory) -> Iterator[LlamaServer]:
    with LlamaServer(n_ctx=2048, log=tmp_path_factory.mktemp("llama") / "server.log") as s:
        yield s


def local_catalog(server: LlamaServer, extra: str = "") -> Catalog:
    config = parse_catalog_config(tomllib.loads(server.config(extra)))
    assert config.problems == ()
    return Catalog(config=config, keys=KeyStore(environ={}))


def test_structured_output_makes_the_save_memory_arguments_parse(server) -> None:
    store = MemoryStore()
    journal = pending_session(store, SESSION)
    (result,) = asyncio.run(consolidate_pending(store, local_catalog(server)))
    # The grammar leaves the model no way to write anything but the schema's JSON: every
    # reply parses; one may only be cut off by its length, which is retried smaller.
    for attempt in result.attempts:
        assert attempt.outcome is Outcome.OK or attempt.kind is Kind.CONTEXT_WINDOW, attempt
    assert result.saved, result.reason
    assert store.find_session(journal.id).pending == []
    (entry,) = store.history_entries()
    assert len(entry.text) > 20


def test_chat_streams_a_reply_and_new_saves_the_session_or_keeps_it(server) -> None:
    from app.main import KeptApp
    from app.settings import AppSettings, Settings
    from app.widgets.status_bar import StatusBar
    from tests.support import send, settle

    settings = Settings(AppSettings(model=MODEL_ALIAS), MemorySettings(), ())
    store = MemoryStore(settings=settings.memory)

    async def scenario() -> None:
        app = KeptApp(store=store, catalog=local_catalog(server), settings=settings)
        async with app.run_test() as pilot:
            await settle(pilot)
            await send(pilot, "Say hello in three words.")
            reply = app.session.messages[-1]
            assert reply["role"] == "assistant" and reply["content"].strip()
            assert reply["model"] == MODEL_ALIAS
            old = app.session.journal
            await pilot.press(*"/new", "enter")
            await settle(pilot)
            status = str(app.screen.query_one(StatusBar).render())
            journal = store.find_session(old.id)
            assert len(journal.messages) == 2  # never lost, whatever the model wrote
            if journal.pending:  # not saved: the reason is shown and kept with it
                failure = journal.failures[journal.pending[0]][-1]
                assert "Memory not saved yet" in status and failure.reason
            else:
                assert "Memory saved (smollm2" in status
                assert store.history_entries()

    asyncio.run(scenario())
