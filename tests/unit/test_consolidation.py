"""Consolidation through the real fake provider: memory saved, or the session pending."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest

from catalog import MODEL_CATALOG, Attempt, Kind, Outcome
from memory import (
    Consolidation,
    LiveSession,
    MemorySettings,
    MemoryStore,
    consolidate,
    consolidate_pending,
)
from memory.chat.system_prompt import system_prompt
from memory.consolidation.run import next_retry
from tests.fakes.provider import (
    FakeProvider,
    cut,
    error_event,
    hang,
    http_error,
    stall,
    text,
    tool_call,
    tool_use_failed,
)
from tests.support import (
    FAST_POLICY,
    SAMPLE_MESSAGES,
    fake_catalog,
    pending_session,
    save_args,
)

CHAIN = (
    "llama-3.3-70b-versatile",
    "qwen/qwen3-32b",
    "meta-llama/llama-4-scout-17b-16e-instruct",
    "gpt-4.1-mini",
    "claude-haiku-4-5",
)  # as the providers name them
CHAIN_IDS = (
    "llama-3.3-70b-versatile",
    "qwen3-32b",
    "llama-4-scout-17b-16e-instruct",
    "gpt-4.1-mini",
    "claude-haiku-4-5",
)
GATEWAY = ("groq", "groq", "groq", "openai", "anthropic")
WHEN = "2026-11-20T09:17:00+00:00"  # a minute after SAMPLE_MESSAGES' last
# What the user of a long session likes: one thing a part, more than it has parts.
LIKES = (
    "apples",
    "cheese",
    "honey",
    "tennis",
    "chess",
    "jazz",
    "sailing",
    "poetry",
    "tulips",
    "owls",
    "kites",
    "opera",
)
# Deadlines far above the work: a model that answers is never late, however busy the machine.
# Only a model that never answers meets a deadline: its own `HANG_DEADLINE`, or for a stream
# that stops `stall_timeout`, which a healthy stream's gaps (no UI here) stay far below.
POLICY = replace(FAST_POLICY, attempt_deadline=60.0, stall_timeout=2.0)
HANG_DEADLINE = 3.0


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore(settings=MemorySettings(attempt_deadline=60.0)).ensure()


async def run_pending(
    store: MemoryStore,
    fake: FakeProvider,
    *,
    stream: bool = False,
    hanging: str | None = None,
    **kwargs: Any,
) -> list[Consolidation]:
    """Consolidate every pending session; `hanging` (a model id) gets the short deadline
    that finds a model that never answers."""
    entries = tuple(
        replace(e, deadline=HANG_DEADLINE) if e.id == hanging else e for e in MODEL_CATALOG
    )
    catalog = fake_catalog(fake, entries=entries)
    return await consolidate_pending(store, catalog, policy=POLICY, stream=stream, **kwargs)


ADD_ANA = {
    "history_entry": "Ana introduced herself.",
    "edits": [
        {
            "op": "add",
            "line": "Name: Ana",
            "evidence": [{"message": 1, "quote": "Je m'appelle Ana"}],
        }
    ],
}


def healthy(fake: FakeProvider, **args: str) -> None:
    fake.default = tool_call("save_memory", save_args(**args))


FAULTS = {
    "429": http_error(429),
    "500": http_error(500),
    "524": http_error(524),
    "529": http_error(529),
    "401": http_error(401),
    "no answer": hang(),
    "tool call failed": tool_use_failed(),
    "prose instead of a tool call": text("Here is a summary of the conversation: ..."),
    "invalid JSON arguments": tool_call("save_memory", '{"history_entry": "x", "memory_'),
    "wrong-typed arguments": tool_call(
        "save_memory", {"history_entry": 42, "memory_update": ["a"]}
    ),
    "empty history entry": tool_call(
        "save_memory", {"history_entry": " ", "memory_update": "# M\n"}
    ),
    "stall mid-stream": stall(),
    "error event mid-stream": error_event(),
    "cut connection": cut(),
}
STREAM_ONLY = {"stall mid-stream", "error event mid-stream", "cut connection"}
FOUND_BY_A_TIMER = {"no answer": Kind.DEADLINE, "stall mid-stream": Kind.STALLED}


def expected_saver(position: int, fault: str) -> int | None:
    """The chain position whose model saves the memory, or None (stays pending)."""
    for later in range(position + 1, len(CHAIN)):
        if fault == "401" and GATEWAY[later] == GATEWAY[position]:
            continue  # the refused key writes off its whole gateway
        return later
    return None


MATRIX = [
    pytest.param(
        fault,
        position,
        stream,
        id=f"{fault}-{CHAIN_IDS[position]}-{'stream' if stream else 'plain'}",
    )
    for fault in FAULTS
    for position in range(len(CHAIN))
    for stream in (False, True)
    if stream or fault not in STREAM_ONLY
]


@pytest.mark.parametrize(("fault", "position", "stream"), MATRIX)
async def test_every_fault_at_every_position_of_the_chain(
    store: MemoryStore, fake: FakeProvider, fault: str, position: int, stream: bool
) -> None:
    journal = pending_session(store)
    healthy(fake)
    for earlier in CHAIN[:position]:  # reach `position`: the models before it write prose
        fake.set_default(earlier, text("I summarised it for you."))
    fake.set_default(CHAIN[position], FAULTS[fault])

    hanging = CHAIN_IDS[position] if fault == "no answer" else None
    (result,) = await run_pending(store, fake, stream=stream, hanging=hanging)

    saver = expected_saver(position, fault)
    if fault in FOUND_BY_A_TIMER:  # found as what it is, not as some other failure
        (faulty,) = [a for a in result.attempts if a.model == CHAIN_IDS[position]]
        assert faulty.kind is FOUND_BY_A_TIMER[fault], faulty
    reloaded = store.find_session(journal.id)
    if saver is None:
        assert not result.saved
        assert reloaded.state == "pending" and reloaded.path.parent == store.sessions_dir
        assert len(reloaded.messages) == 5  # nothing lost
        assert reloaded.failures and result.reason
        assert not store.memory_path.exists()
        assert store.history_entries() == []
    else:
        assert result.saved and result.model == CHAIN_IDS[saver]
        assert reloaded.state == "consolidated" and reloaded.path.parent == store.done_dir
        assert store.memory_path.read_text() == "# About the user\n- Name: Ana\n"
        (entry,) = store.history_entries()
        started = datetime.fromisoformat(SAMPLE_MESSAGES[0]["time"]).astimezone()
        assert entry.body == f"[{started:%Y-%m-%d %H:%M}] The user introduced themselves."
    # Each model is visited once; transient errors are retried once by the head while a
    # healthy model follows it, and with the full backoff by the last model of the walk.
    for index, model in enumerate(CHAIN):
        seen = fake.count(model=model)
        after_saver = saver is not None and index > saver
        written_off = fault == "401" and index > position and GATEWAY[index] == GATEWAY[position]
        if after_saver or written_off:
            assert seen == 0
        elif index == position == 0 and fault in ("429", "500", "524", "529"):
            assert seen == 2
        elif index == position == len(CHAIN) - 1 and fault in ("429", "500", "524", "529"):
            assert seen == 4
        else:
            assert seen == 1, (model, seen)
    logged = [r for r in store.read_log() if not r.get("purpose")]  # not second opinions
    assert [r["model"] for r in logged] == [a.model for a in result.attempts]
    assert all(r["session"] == journal.id for r in logged)


async def test_a_session_no_model_could_save_is_retried_later_and_then_saved(
    store: MemoryStore, fake: FakeProvider
) -> None:
    journal = pending_session(store)
    fake.default = http_error(500)
    (first,) = await run_pending(store, fake)
    assert not first.saved
    assert "No model in the chain answered" in first.reason
    reloaded = store.find_session(journal.id)
    (segment,) = reloaded.pending
    due = next_retry(reloaded, segment)
    assert due is not None
    # Not due yet: a run that only takes due sessions leaves it alone.
    assert await run_pending(store, fake, only_due=True) == []
    healthy(fake)
    (second,) = await run_pending(store, fake)
    assert second.saved
    assert store.find_session(journal.id).state == "consolidated"
    outcomes = [r["outcome"] for r in store.read_log() if not r.get("purpose")]  # no judge
    assert outcomes.count("ok") == 1 and "failed" in outcomes


async def test_the_prompt_carries_times_roles_tool_calls_and_languages(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    healthy(fake)
    await run_pending(store, fake)
    body = fake.requests[0].body
    prompt = json.dumps(body["messages"], ensure_ascii=False)
    for needle in (
        "USER:",
        "ASSISTANT (gpt-4.1-mini)",
        "called search_history",
        "Zürich",
        "日本語も話せますか",
        "少しだけ",
        "TOOL search_history",
        "the language the user wrote in",
    ):
        assert needle in prompt, needle
    assert "2026-11-20" in prompt
    assert body["tools"][0]["function"]["name"] == "save_memory"
    assert body["tool_choice"]["function"]["name"] == "save_memory"


async def test_a_model_that_answers_the_json_in_text_is_accepted(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    answer = "```json\n" + json.dumps(save_args(entry="Text JSON entry.")) + "\n```"
    fake.set_default(CHAIN[0], text(answer))
    (result,) = await run_pending(store, fake)
    assert result.saved and result.model == CHAIN_IDS[0]
    assert store.history_entries()[0].body.endswith("Text JSON entry.")


async def test_escape_sequences_never_reach_the_files(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    healthy(
        fake,
        entry="Cleared \x1b[2J\x1b]0;pwned\x07the screen\x00.",
        memory="# M\n- \x1b[31mPrefers short\x1b[0m \u202eanswers\n",
    )
    await run_pending(store, fake)
    for path in (store.memory_path, store.history_path):
        data = path.read_text()
        assert "\x1b" not in data and "\x00" not in data and "\u202e" not in data
    assert store.history_entries()[0].body.endswith("Cleared the screen.")
    assert store.memory_path.read_text() == "# M\n- Prefers short answers\n"


async def test_a_rewrite_that_drops_lines_nobody_asked_to_forget_is_refused(
    store: MemoryStore, fake: FakeProvider
) -> None:
    old = "# About Ana\n" + "".join(f"- fact number {i} that matters\n" for i in range(40))
    store.write_memory(old)
    pending_session(store)
    new = old + "- Prefers short answers\n"
    # The first model's edits forget every line, quoting words that never asked for it.
    fake.set_default(CHAIN[0], tool_call("save_memory", save_args(memory="# Ana\n", base=old)))
    shorter = save_args(memory=new, base=old, quote="I prefer short answers.")
    fake.set_default(CHAIN[1], tool_call("save_memory", shorter))
    (result,) = await run_pending(store, fake)
    assert result.saved and result.model == CHAIN_IDS[1]
    assert "the user did not ask to forget it" in result.attempts[0].reason
    assert store.memory_path.read_text() == new
    assert [v.source for v in store.versions()] == ["edited by you", "consolidation"]
    assert store.versions()[0].path.read_text() == old


async def test_edits_over_the_memory_budget_are_refused(
    store: MemoryStore, fake: FakeProvider
) -> None:
    store.write_memory("# Me\n" + "- I said this once upon a time\n" * 510)  # 15,815 chars
    facts = [
        (
            "Grows tomatoes on the balcony every summer",
            "I grow tomatoes on my balcony every summer",
        ),
        (
            "Cycles along the river to work most mornings",
            "I cycle along the river to work most mornings",
        ),
        ("Bakes sourdough bread at home on weekends", "I bake sourdough bread at home on weekends"),
        ("Collects old maps of mountain villages", "I collect old maps of mountain villages"),
        ("Swims in the lake near the flat in spring", "I swim in the lake near my flat in spring"),
        ("Reads crime novels before going to sleep", "I read crime novels before going to sleep"),
    ]
    told = {"role": "user", "content": ". ".join(q for _, q in facts) + ".", "time": WHEN}
    pending_session(store, [*SAMPLE_MESSAGES, told])
    # Each line stands on the user's words; together they do not fit.
    many = [
        {"op": "add", "line": line, "evidence": [{"message": 6, "quote": quote}]}
        for line, quote in facts
    ]
    fake.set_default(
        CHAIN[0], tool_call("save_memory", {"history_entry": "Ana said hi.", "edits": many})
    )
    fake.default = tool_call("save_memory", ADD_ANA)
    (result,) = await run_pending(store, fake)
    assert result.model == CHAIN_IDS[1]
    assert "over its 16,000 budget" in result.attempts[0].reason


async def test_a_user_edit_during_consolidation_is_never_overwritten(
    store: MemoryStore, fake: FakeProvider
) -> None:
    tea, coffee = "# Me\n- likes tea\n", "# Me\n- likes COFFEE\n"
    store.write_memory(tea)
    journal = pending_session(store)
    fake.script(
        CHAIN[0],
        tool_call("save_memory", save_args(memory="# Me\n- likes tea\n- Ana\n", base=tea)),
        tool_call("save_memory", save_args(memory=f"{coffee}- Ana\n", base=coffee)),
    )
    edits = iter([coffee])

    def user_edits(attempt: Attempt) -> None:
        # The user saves MEMORY.md while the model's answer is on its way to the commit.
        edit = next(edits, None)
        if attempt.outcome is Outcome.OK and edit:
            store.memory_path.write_text(edit)

    (segment,) = journal.pending
    result = await consolidate(
        store, fake_catalog(fake), journal, segment, policy=POLICY, on_attempt=user_edits
    )
    assert result.saved
    assert fake.count(model=CHAIN[0]) == 2  # consolidated again against the edited text
    asked = [r for r in fake.requests if not r.judging]  # not the second opinions
    assert "likes COFFEE" in json.dumps(asked[1].body["messages"])
    assert store.memory_path.read_text() == "# Me\n- likes COFFEE\n- Ana\n"
    assert [v.source for v in store.versions()] == ["edited by you", "consolidation"]
    assert store.versions()[0].path.read_text() == coffee
    assert len(store.history_entries()) == 1


async def test_a_user_who_keeps_editing_keeps_the_session_pending_not_clobbered(
    store: MemoryStore, fake: FakeProvider
) -> None:
    store.write_memory("# Me\n")
    journal = pending_session(store)
    fake.default = tool_call("save_memory", ADD_ANA)
    count = iter(range(100))

    def user_edits(attempt: Attempt) -> None:
        if attempt.outcome is Outcome.OK:
            store.memory_path.write_text(f"# Me\n- edit {next(count)}\n")

    (segment,) = journal.pending
    result = await consolidate(
        store, fake_catalog(fake), journal, segment, policy=POLICY, on_attempt=user_edits
    )
    assert not result.saved
    assert "MEMORY.md changed while this session was being saved" in result.reason
    assert store.memory_path.read_text() == "# Me\n- edit 2\n"
    assert store.find_session(journal.id).state == "pending"
    assert store.history_entries() == []


async def test_a_long_session_is_consolidated_in_parts_into_one_entry(
    store: MemoryStore, fake: FakeProvider
) -> None:
    small = tuple(
        replace(e, context_window=4_000, fallback=None) if e.id == "gpt-4.1-mini" else e
        for e in MODEL_CATALOG
    )
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Message {i}: " + "lorem ipsum dolor sit amet " * 40,
        }
        for i in range(60)
    ]
    for i, thing in enumerate(LIKES):  # what each part adds stands on the user's words
        messages[2 * i]["content"] += f" I like {thing}."
    pending_session(store, messages)
    store.settings = replace(
        store.settings, consolidation_model="gpt-4.1-mini", memory_max_chars=1_000
    )
    fake.script(
        "gpt-4.1-mini",
        *[
            tool_call(
                "save_memory",
                {
                    "history_entry": f"Parts 1-{i} discussed lorem ipsum.",
                    "edits": [
                        {
                            "op": "add",
                            "line": f"Likes {thing}",
                            "evidence": [{"message": 2 * i - 1, "quote": f"I like {thing}"}],
                        }
                    ],
                },
            )
            for i, thing in enumerate(LIKES, start=1)
        ],
    )
    results = await consolidate_pending(store, fake_catalog(fake, entries=small), policy=POLICY)
    assert results[0].saved
    parts = fake.count(model="gpt-4.1-mini")
    assert 2 < parts <= len(LIKES)
    asked = [r for r in fake.requests if not r.judging]
    last_prompt = asked[-1].body["messages"][1]["content"]
    assert f"part {parts} of {parts}" in last_prompt
    assert f"Parts 1-{parts - 1} discussed" in last_prompt  # the draft entry is carried
    assert f"- Likes {LIKES[parts - 2]}" in last_prompt  # and the memory so far
    (entry,) = store.history_entries()
    assert entry.body.endswith(f"Parts 1-{parts} discussed lorem ipsum.")
    everything = "".join(json.dumps(r.body) for r in asked)
    assert all(f"Message {i}:" in everything for i in range(60))


async def test_non_utf8_memory_is_kept_byte_for_byte_as_a_version(
    store: MemoryStore, fake: FakeProvider
) -> None:
    original = b"# Me\n- caf\xe9 au lait\n- \xff\xfe odd bytes\n"
    store.memory_path.write_bytes(original)
    problem = store.read_memory().problem
    assert problem and "not valid UTF-8" in problem
    pending_session(store)
    fake.default = tool_call("save_memory", ADD_ANA)
    (result,) = await run_pending(store, fake)
    assert result.saved
    assert store.versions()[0].path.read_bytes() == original
    assert "caf\ufffd au lait" in json.dumps(fake.requests[0].body, ensure_ascii=False)


async def test_a_very_large_memory_takes_no_new_lines_until_tidied_and_is_never_cut(
    store: MemoryStore, fake: FakeProvider
) -> None:
    huge = "# Me\n" + "".join(f"- remembered fact {i}\n" for i in range(20_000))
    store.write_memory(huge)
    journal = pending_session(store)
    fake.default = tool_call("save_memory", ADD_ANA)
    (result,) = await run_pending(store, fake)
    assert not result.saved and "over its 16,000 budget" in result.reason
    assert store.memory_path.read_text() == huge
    assert store.find_session(journal.id).pending
    prompt = system_prompt(huge, limit=16_000)
    assert len(prompt) < 18_000 and "more characters of MEMORY.md not shown" in prompt


async def test_an_unknown_consolidation_model_keeps_the_session_pending(
    store: MemoryStore, fake: FakeProvider
) -> None:
    journal = pending_session(store)
    store.settings = replace(store.settings, consolidation_model="llama-9")
    (result,) = await run_pending(store, fake)
    assert not result.saved and "consolidation model 'llama-9'" in result.reason
    assert fake.requests == []
    assert store.find_session(journal.id).state == "pending"


async def test_compaction_consolidates_the_older_part_and_keeps_the_journal_whole(
    store: MemoryStore, fake: FakeProvider
) -> None:
    store.settings = replace(store.settings, session_max_messages=10, session_keep_messages=4)
    session = LiveSession.resume_or_start(store, "gpt-4.1-mini")
    for i in range(12):
        session.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
    assert session.needs_compaction()
    segment = session.compact()
    assert segment is not None and segment.start == 0
    assert session.messages[segment.end]["role"] == "user"
    assert [m["content"] for m in session.context()] == [f"m{i}" for i in range(segment.end, 12)]
    fake.default = tool_call("save_memory", {"history_entry": "Said m0 to m7.", "edits": []})
    (result,) = await run_pending(store, fake)
    assert result.saved
    # Still the live session, every message still in its journal.
    session.release()
    resumed = LiveSession.resume_or_start(MemoryStore(settings=store.settings))
    assert resumed.id == session.id and len(resumed.messages) == 12
    assert len(resumed.context()) == 12 - segment.end
    transcript = fake.requests[0].body["messages"][1]["content"]
    assert "m0" in transcript and f"m{segment.end}" not in transcript
    rest = resumed.close()
    assert rest is not None and rest.start == segment.end and rest.end == 12


async def test_the_consolidation_chain_is_composed_unless_a_model_is_chosen(
    store: MemoryStore, fake: FakeProvider
) -> None:
    fake.default = text("Prose, not a call.")  # no model saves: the whole chain is asked
    pending_session(store)
    await run_pending(store, fake)
    assert [r.model for r in fake.requests] == list(CHAIN)
    fake.reset()
    store.settings = replace(store.settings, consolidation_model="gpt-4.1-mini")
    healthy(fake)
    (result,) = await run_pending(store, fake)
    assert result.saved and result.model == "gpt-4.1-mini"
    assert [r.model for r in fake.requests if not r.judging] == ["gpt-4.1-mini"]


async def test_a_failing_head_costs_the_first_session_only(
    store: MemoryStore, fake: FakeProvider
) -> None:
    healthy(fake)
    fake.set_default(CHAIN[0], http_error(500))
    pending_session(store)
    (first,) = await run_pending(store, fake)
    assert first.saved and first.model == CHAIN_IDS[1]
    assert fake.count(model=CHAIN[0]) == 2  # one short retry: a healthy model follows
    pending_session(store)
    (second,) = await run_pending(store, fake)
    assert second.saved and second.model == CHAIN_IDS[1]
    assert fake.count(model=CHAIN[0]) == 2  # cooling down: not asked again
    assert [a.model for a in second.attempts] == [CHAIN_IDS[1]]
    assert store.health().get(CHAIN_IDS[0]).describe().startswith("cooling down until")


async def test_a_late_head_is_hedged_by_the_next_model(
    store: MemoryStore, fake: FakeProvider
) -> None:
    from catalog import Attempt

    book = store.health()
    for _ in range(3):
        book.observe(Attempt(CHAIN_IDS[0], "groq", Outcome.OK, latency=0.01))
    healthy(fake)
    fake.set_default(CHAIN[0], hang())
    store.settings = replace(store.settings, attempt_deadline=30.0)
    journal = pending_session(store)
    policy = replace(POLICY, attempt_deadline=30.0)
    (result,) = await consolidate_pending(store, fake_catalog(fake), policy=policy)
    assert result.saved and result.model == CHAIN_IDS[1]
    assert result.elapsed < 20  # not the head's 30 s deadline
    logged = [(r["model"], r["outcome"]) for r in store.read_log() if not r.get("purpose")]
    assert sorted(logged) == [(CHAIN_IDS[0], "cancelled"), (CHAIN_IDS[1], "ok")]
    assert all(r["session"] == journal.id for r in store.read_log())


def test_every_surface_says_when_a_retry_is_due_in_the_same_words(store: MemoryStore) -> None:
    from datetime import timedelta

    from memory.consolidation.run import retry_note
    from tests.support import pending_session

    journal = pending_session(store)
    (segment,) = journal.pending
    assert retry_note(journal, segment) == "due now"
    journal.mark_failed(segment, "every model refused")
    due = next_retry(journal, segment)
    assert due is not None
    local = due.astimezone()
    assert retry_note(journal, segment, now=due) == f"next retry after {local:%H:%M}"
    tomorrow = retry_note(journal, segment, now=due - timedelta(days=1))
    assert tomorrow == f"next retry after {local:%Y-%m-%d %H:%M}"
