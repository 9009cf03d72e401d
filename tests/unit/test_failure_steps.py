"""A pending session's last failure keeps what the user can do about it: the journal records
the cause beside the reason (a fact), and /log and `kept log` word the step in their own
terms, the chat's /keys or the shell's `keyring set`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.cli.main import main
from app.words.consolidation import last_failure
from memory import MemoryStore, consolidate_pending
from memory.consolidation.outcome import Cause, Status
from memory.sessions.journal import load
from memory.sessions.pending import INDEX, scan_pending
from tests.fakes.provider import FakeProvider, http_error
from tests.support import FAST_POLICY, fake_catalog, pending_session


def test_the_cause_of_a_failure_is_kept_with_it_and_read_back() -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store)
    (segment,) = journal.pending
    journal.mark_failed(segment, "No model can save memory", cause=Cause.NO_MODEL)

    (failure,) = load(journal.path).failures[segment]
    assert (failure.reason, failure.cause) == ("No model can save memory", "no model")
    (cached,) = scan_pending(store).sessions  # written to the pending cache, and read from it
    assert cached.failures[segment][-1].cause == "no model"
    assert scan_pending(store).sessions[0].failures[segment][-1].cause == "no model"


def test_a_pending_cache_written_before_causes_still_reads() -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store)
    (segment,) = journal.pending
    journal.mark_failed(segment, "server error")
    scan_pending(store)
    index = store.layout.local_dir / INDEX
    data = json.loads(index.read_text())
    trimmed = 0
    for entry in data["journals"].values():  # each failure back to its three older fields
        parts = entry[-1]  # [size, mtime, inode, id, parts]
        for *_, failures in parts:
            for failure in failures:
                del failure[3:]
                trimmed += 1
    assert trimmed == 1
    index.write_text(json.dumps(data))
    (session,) = scan_pending(store).sessions
    assert [(f.reason, f.cause) for f in session.failures[segment]] == [("server error", "")]


def test_each_surface_words_the_step_of_the_cause_it_reads_back() -> None:
    chat = last_failure("No model can save memory", "no model")
    shell = last_failure("No model can save memory", "no model", shell=True)
    assert chat.startswith("No model can save memory. ") and "/keys" in chat
    assert "keyring set kept" in shell and "/keys" not in shell
    assert last_failure("server error", "") == "server error"  # nothing to do: said as it is
    assert last_failure("odd", "a cause from a newer Kept") == "odd"


async def test_a_refused_key_is_a_cause_and_kept_log_says_what_to_type(
    fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store)
    fake.default = http_error(401)
    policy = replace(FAST_POLICY, retries=0)
    (result,) = await consolidate_pending(store, fake_catalog(fake), policy=policy)
    assert result.status is Status.FAILED and result.cause is Cause.KEY_REFUSED
    (segment,) = journal.pending
    assert load(journal.path).failures[segment][-1].cause == "key refused"

    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert "A key was refused: store a new one with `keyring set kept <gateway>`." in out
    assert "/keys" not in out
