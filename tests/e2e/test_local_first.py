"""Local-first: memory is saved with no cloud key, through a local OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from catalog import Catalog, KeyStore, Kind, Outcome, complete
from catalog.config import LOCAL_WINDOW, local_model
from catalog.probe import OLLAMA_WINDOW, probe_server
from catalog.structured import _learned, _windows
from memory import Consolidation, MemorySettings, MemoryStore, consolidate_pending
from memory.consolidation.edits import Context
from memory.consolidation.outcome import Cause
from memory.settings import Review
from tests.fakes.ollama import FakeOllama
from tests.fakes.provider import FakeProvider, http_error, text, tool_call
from tests.support import FAST_POLICY, local_catalog, pending_session, save_args

# What save_args() takes MEMORY.md to: one added line, quoting "Ana" from SAMPLE_MESSAGES.
SAVED = "# About the user\n- Name: Ana\n"


@pytest.fixture
def store() -> MemoryStore:
    # These tests are about reaching the local model; its changes are trusted here (by
    # default they wait for review: tests/unit/test_memory_edits.py).
    return MemoryStore(settings=MemorySettings(review_by_model={"smollm2": Review.AFTER}))


@pytest.fixture(autouse=True)
def forget_what_servers_said() -> Iterator[None]:
    _learned.clear()
    _windows.clear()
    yield
    _learned.clear()
    _windows.clear()


async def run(store: MemoryStore, catalog: Catalog, **kwargs: Any) -> list[Consolidation]:
    return await consolidate_pending(store, catalog, policy=FAST_POLICY, **kwargs)


async def test_with_no_cloud_key_the_local_model_saves_memory_under_a_json_schema(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    fake.set_default("smollm2", text(json.dumps(save_args())))
    (result,) = await run(store, local_catalog(fake), chat_model="smollm2")
    assert result.saved and result.model == "smollm2"
    assert [a.outcome for a in result.attempts] == [Outcome.OK]  # no "no key" noise
    (request,) = fake.requests
    body = request.body
    assert request.gateway == "local"
    assert "tools" not in body and "tool_choice" not in body
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["history_entry", "edits"]
    # One shape per operation: the grammar cannot leave out an add's line, a quoted line
    # or the user's words as evidence.
    shapes = schema["properties"]["edits"]["items"]["anyOf"]
    assert [s["required"] for s in shapes] == [
        ["op", "line", "reason", "evidence"],
        ["op", "old", "line", "reason", "evidence"],
        ["op", "old", "reason", "evidence"],
    ]
    # Prompt and reply must fit the 4,096-token window together.
    assert 0 < body["max_tokens"] < 4096
    assert store.memory_path.read_text() == SAVED


async def test_a_server_that_refuses_json_schema_is_asked_in_its_own_dialect(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    pending_session(store)
    # llama-cpp-python's server: HTTP 422 for json_schema, a grammar for json_object+schema.
    fake.script("smollm2", http_error(422, message="Input should be 'text' or 'json_object'"))
    fake.set_default("smollm2", text(json.dumps(save_args())))
    first, second = await run(store, local_catalog(fake))
    assert first.saved and second.saved
    formats = [r.body["response_format"] for r in fake.requests]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    assert formats[1]["schema"]["required"] == ["history_entry", "edits"]
    assert [a.outcome for a in first.attempts] == [Outcome.OK]


async def test_structured_output_off_calls_the_tool(store: MemoryStore, fake: FakeProvider) -> None:
    pending_session(store)
    fake.set_default("smollm2", tool_call("save_memory", save_args()))
    catalog = local_catalog(fake, 'structured_output = "off"')
    (result,) = await run(store, catalog)
    assert result.saved
    body = fake.requests[0].body
    assert "response_format" not in body
    assert body["tool_choice"]["function"]["name"] == "save_memory"


async def test_a_reply_cut_by_the_context_says_so_and_the_next_try_uses_smaller_parts(
    store: MemoryStore, fake: FakeProvider
) -> None:
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Message {i}: my name is Ana, " + "words and more words " * 30,
            "time": "2026-11-20T09:15:00+00:00",
        }
        for i in range(16)
    ]
    pending_session(store, messages)
    fake.script("smollm2", text('{"history_entry": "The user', finish="length"))
    fake.set_default("smollm2", text(json.dumps(save_args(quote="my name is Ana"))))
    (result,) = await run(store, local_catalog(fake))
    assert result.saved
    first = result.attempts[0]
    assert first.outcome is Outcome.REJECTED and first.kind is Kind.CONTEXT_WINDOW
    assert first.reason.startswith("smollm2 stopped at its reply limit")
    contents = [r.body["messages"][1]["content"] for r in fake.requests]
    assert "part 1 of" not in contents[0]  # the whole session fitted one request at first
    assert "part 1 of" in contents[1]  # then it was cut into smaller parts
    assert all(f"Message {i}:" in "".join(contents[1:]) for i in range(16))


def test_a_cut_off_reply_names_the_tokens_of_the_window(
    store: MemoryStore, fake: FakeProvider
) -> None:
    from catalog import Reply
    from memory.consolidation.reply import parse_save_memory

    reply = Reply("smollm2", "local", '{"history_entry": "x', (), "length", 969, 3127, 0.0)
    context = Context([], datetime.now(UTC), 16_000)
    with pytest.raises(Exception) as caught:
        parse_save_memory(reply, "", MemorySettings(), window=4096, context=context)
    assert str(caught.value) == (
        "smollm2 ran out of context: 969 prompt + 3,127 completion tokens of 4,096"
    )


async def test_a_local_model_joins_the_end_of_a_hosted_chain(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    fake.set_default("gpt-4.1-mini", http_error(500))
    fake.set_default("smollm2", text(json.dumps(save_args())))
    catalog = local_catalog(fake, OPENAI_API_KEY="sk-test-0123456789")
    catalog.gateways["openai"] = replace(
        catalog.gateways["openai"], base_url=fake.base_url("openai")
    )
    (result,) = await run(store, catalog)
    assert result.saved and result.model == "smollm2"
    assert [a.model for a in result.attempts][-1] == "smollm2"
    assert {a.model for a in result.attempts} == {"gpt-4.1-mini", "smollm2"}


async def test_no_model_that_can_answer_keeps_the_session_pending_with_the_fix(
    store: MemoryStore,
) -> None:
    journal = pending_session(store)
    (result,) = await run(store, Catalog(keys=KeyStore(environ={})))
    assert not result.saved and result.attempts == ()
    assert "No model can save memory" in result.reason and "/keys" not in result.reason
    assert result.cause is Cause.NO_MODEL  # the app words the fix: a key, or a local server
    assert store.find_session(journal.id).pending


async def test_a_slow_local_model_gets_its_own_deadline(
    store: MemoryStore, fake: FakeProvider
) -> None:
    from tests.fakes.provider import trickle

    fake.set_default("smollm2", trickle(0.2, 1, json.dumps(save_args())))  # 0.2 s to answer
    policy = replace(FAST_POLICY, attempt_deadline=0.05, stall_timeout=0.05, retries=0)
    pending_session(store)
    # A hosted model would miss this policy's deadline; a local one has its own (600 s by
    # default, or the one set for it), which replaces the transport's and the memory's.
    (result,) = await consolidate_pending(store, local_catalog(fake), policy=policy)
    assert result.saved and [a.outcome for a in result.attempts] == [Outcome.OK]
    pending_session(store)
    slow = local_catalog(fake, "deadline = 300")
    (result,) = await consolidate_pending(store, slow, policy=policy)
    assert result.saved and [a.outcome for a in result.attempts] == [Outcome.OK]


def test_probe_lists_the_models_of_an_openai_compatible_server(fake: FakeProvider) -> None:
    fake.served = ["smollm2", "qwen2.5:0.5b"]
    probe = probe_server(fake.base_url("local").removesuffix("/v1"))
    assert probe.ok and probe.kind == "openai"
    assert probe.base_url == fake.base_url("local")
    assert [m.id for m in probe.models] == ["smollm2", "qwen2.5:0.5b"]


def test_probe_reads_the_context_llama_server_was_started_with(fake: FakeProvider) -> None:
    fake.served, fake.n_ctx = ["smollm2"], 4096
    probe = probe_server(fake.base_url("local"))
    assert [(m.id, m.context_window) for m in probe.models] == [("smollm2", 4096)]


def test_probe_finds_an_ollama_server_by_its_own_api(fake: FakeProvider) -> None:
    fake.served, fake.ollama_only = ["llama3.2:latest"], True
    probe = probe_server(fake.base_url("local"))
    assert probe.ok and probe.kind == "ollama"
    assert [m.id for m in probe.models] == ["llama3.2:latest"]


def test_probe_names_an_address_where_nothing_listens() -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    probe = probe_server(f"http://127.0.0.1:{port}/v1")
    assert not probe.ok
    assert probe.problem == (
        f"nothing is listening at http://127.0.0.1:{port}/v1/models (connection refused)"
    )


async def test_a_raw_line_break_inside_a_json_string_is_accepted(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    fake.set_default(
        "smollm2",
        text(
            '{"history_entry": "Ana said hello.\nShe lives in Zurich.", "edits": [{"op": '
            '"add", "line": "Zurich", "section": "# Ana", "evidence": [{"message": 1, '
            '"quote": "j\'habite à\nZürich"}]}]}'
        ),
    )
    (result,) = await run(store, local_catalog(fake))
    assert result.saved, result.reason
    assert store.memory_path.read_text() == "# Ana\n- Zurich\n"
    (entry,) = store.history_entries()
    assert entry.body.endswith("Ana said hello. She lives in Zurich.")


def test_a_model_on_a_keyless_gateway_has_a_deadline_for_a_busy_cpu() -> None:
    """A CPU model at 4 tokens/s takes minutes to save a session: the 30 s hosted deadline
    would fail every save and every retry. Unless the user sets one, it gets LOCAL_DEADLINE."""
    from catalog.config import LOCAL_DEADLINE, ModelTable, user_model

    assert user_model(ModelTable(id="smollm2")).deadline == LOCAL_DEADLINE
    assert user_model(ModelTable(id="smollm2", deadline=90.0)).deadline == 90.0
    assert user_model(ModelTable(id="m", gateway="deepseek")).deadline is None  # hosted


# --- the local server understood: its models' names and the window it runs with ----------

# What llama-cpp-python's server lists for a model it was started without --model_alias.
PATH = "/home/ana/models/SmolLM2-135M-Instruct.Q4_1.gguf"
LABEL = "SmolLM2-135M-Instruct.Q4_1"


def test_a_model_whose_id_is_a_file_path_is_labelled_by_the_files_name() -> None:
    from catalog.config import ModelTable, user_model

    entry = local_model(PATH)
    assert entry.label == LABEL
    assert entry.id == entry.provider_model == PATH  # what the server needs, unchanged
    assert user_model(ModelTable(id=PATH)).label == LABEL
    assert user_model(ModelTable(id=PATH, label="Smol")).label == "Smol"
    assert local_model("llama3.2:latest").label == "llama3.2:latest"
    assert local_model("qwen/qwen3-32b").label == "qwen/qwen3-32b"  # a name, not a path
    assert local_model("C:\\models\\phi-3.Q4_K_M.gguf").label == "phi-3.Q4_K_M"


# --- the window, where the server says it ------------------------------------------------


def test_the_probe_reads_each_ollama_models_window_from_its_own_api() -> None:
    models = {
        "llama3.2:latest": (131_072, None),  # no num_ctx: Ollama's default
        "qwen2.5:7b-32k": (32_768, 32_768),  # num_ctx in its Modelfile
        "tiny:latest": (2_048, 8_192),  # never more than it was trained for
    }
    with FakeOllama(models) as ollama:
        probe = probe_server(ollama.url)
    assert probe.ok and probe.kind == "ollama" and probe.base_url == f"{ollama.url}/v1"
    assert {m.id: m.context_window for m in probe.models} == {
        "llama3.2:latest": OLLAMA_WINDOW,
        "qwen2.5:7b-32k": 32_768,
        "tiny:latest": 2_048,
    }
    assert probe.default_window == OLLAMA_WINDOW == 4096
    assert ollama.shown[0]["model"] == "llama3.2:latest"


def test_the_probe_of_a_server_that_does_not_say_its_window_offers_its_default(
    fake: FakeProvider,
) -> None:
    fake.served = [PATH]  # llama-cpp-python: no /props, no Ollama API
    probe = probe_server(fake.base_url("local"))
    assert probe.ok and probe.kind == "openai"
    assert probe.window(PATH) is None
    assert probe.default_window == LOCAL_WINDOW == 2048


# --- requests sized to the real window ---------------------------------------------------


async def test_a_chat_reply_to_a_local_model_with_no_window_given_fits_a_small_one(
    fake: FakeProvider,
) -> None:
    """Kept assumed 8,192 tokens and asked for max_tokens 7,942 of a 2,048-token server."""
    catalog = _with_model(fake, "")
    result = await complete(
        catalog,
        "smollm2",
        [{"role": "user", "content": "Hello there."}],
        stream=True,
        policy=FAST_POLICY,
    )
    assert result.ok
    (request,) = fake.requests
    # Prompt and reply fit 2,048 tokens, and the reply leaves the conversation room to go on.
    assert 64 <= request.body["max_tokens"] <= LOCAL_WINDOW // 2


def _with_model(fake: FakeProvider, extra: str, model: str = "smollm2") -> Catalog:
    """A catalog whose one model is `model` on the fake local server, as config.toml says
    (`extra` lines join its [[models]] table; without one it has no context_window)."""
    import tomllib

    from catalog import Catalog, KeyStore
    from catalog.config import parse_catalog_config

    parsed = parse_catalog_config(
        tomllib.loads(
            f'[gateways.local]\nbase_url = "{fake.base_url("local")}"\n\n'
            f'[[models]]\nid = "{model}"\n{extra}\n'
        )
    )
    assert parsed.problems == ()
    return Catalog(config=parsed, keys=KeyStore(environ={}))


@pytest.mark.parametrize(
    ("status", "message", "window"),
    [
        # llama-cpp-python's own words, as its server logs them
        (500, "Requested tokens (4115) exceed context window of 4096", 4096),
        # what its server answers a plain request, in OpenAI's words
        (
            400,
            "This model's maximum context length is 4096 tokens. However, you requested "
            "4115 tokens (3115 in the messages, 1000 in the completion). Please reduce the "
            "length of the messages or completion.",
            4096,
        ),
        # llama.cpp's llama-server
        (400, "request (4476 tokens) exceeds the available context size (4096 tokens)", 4096),
        (400, "the request exceeds the available context size, try increasing it", None),
    ],
    ids=["llama-cpp-python", "openai-words", "llama-server", "no-size"],
)
async def test_a_window_a_server_says_in_an_error_sizes_every_later_request(
    fake: FakeProvider, status: int, message: str, window: int | None
) -> None:
    catalog = _with_model(fake, "context_window = 8192")  # the user's guess was wrong
    fake.script("smollm2", http_error(status, message=message))
    fake.default = text("ok")
    ask = [{"role": "user", "content": "Hello there."}]

    failed = await complete(catalog, "smollm2", ask, stream=True, policy=FAST_POLICY)
    assert not failed.ok
    (attempt,) = failed.attempts  # a full window is not retried
    assert attempt.outcome is Outcome.FAILED and attempt.kind is Kind.CONTEXT_WINDOW
    assert attempt.reason.startswith("the conversation is too long for this model")

    # From then on, in this process, the window the server said sizes every request, in
    # this catalog and in one built afresh (as after a settings reload).
    answered = await complete(catalog, "smollm2", ask, stream=True, policy=FAST_POLICY)
    assert answered.ok
    asked = fake.requests[-1].body["max_tokens"]
    fresh = _with_model(fake, "context_window = 8192")
    shown = fresh.pricing(fresh.get("smollm2"))
    assert shown is not None
    if window is None:  # nothing said the size: the configured window stands
        assert asked == 8192 // 2 and shown.context_window == 8192
        return
    assert "its server's window is 4,096 tokens" in attempt.reason
    assert asked <= window // 2
    assert shown.context_window == window


async def test_a_request_that_cannot_fit_is_refused_before_it_is_sent_and_names_the_label(
    fake: FakeProvider,
) -> None:
    """Told its window in an error, Kept sends no request that cannot fit it: the next one
    would only fail again, minutes later on a CPU, after HTTP 200."""
    catalog = _with_model(fake, "context_window = 8192", model=PATH)
    fake.script(PATH, http_error(400, message="maximum context length is 512 tokens"))
    ask = [{"role": "user", "content": "word " * 700}]
    await complete(catalog, PATH, ask, policy=FAST_POLICY)
    refused = await complete(catalog, PATH, ask, policy=FAST_POLICY)
    (attempt,) = refused.attempts
    assert attempt.kind is Kind.CONTEXT_WINDOW and len(fake.requests) == 1
    assert attempt.reason.endswith(f"more than {LABEL}'s 512-token context window")
