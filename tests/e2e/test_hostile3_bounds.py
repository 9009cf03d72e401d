"""Hostile inputs, round three: what the user (or a paste) supplies never runs unbounded on
the app's process. A regex search runs in a child process that is ended on cancel or time;
redaction is linear and catches what it missed; a huge pending session is estimated once,
from its size."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Static

from app.cli.main import main
from app.screens.search import SearchScreen
from memory import MemorySettings, MemoryStore, consolidate_pending
from memory.consolidation.redact import REDACTED, redact
from memory.recall.search import Pattern, grep, run_search_tool
from tests.fakes.provider import FakeProvider
from tests.support import (
    FAST_POLICY,
    SMALL,
    fake_catalog,
    make_app,
    pending_session,
    search_children,
    settle,
    small_window_entries,
    until,
    until_blocking,
)

LINUX = pytest.mark.skipif(sys.platform != "linux", reason="finds processes in /proc")


# 34 "a"s and then no end of the text: `(a+)+$` backtracks 2**34 times on it.
CATASTROPHIC = "(a+)+$"
LINE = "a" * 34


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore().ensure()
    store.history_path.write_text(f"[2026-11-20 10:00] {LINE}\nand more after it.\n\n")
    return store


async def open_regex_grep(pilot: Pilot[Any]) -> None:
    """/grep, then the catastrophic pattern as a regex (ticking the box searches)."""
    await pilot.press(*"/grep", "enter")
    await until(lambda: isinstance(pilot.app.screen, SearchScreen), message="the search")
    pilot.app.screen.query_one("#pattern", Input).value = CATASTROPHIC
    pilot.app.screen.query_one("#regex", Checkbox).value = True
    await pilot.pause()


# --- a backtracking regex ------------------------------------------------------------------


@LINUX
@pytest.mark.timeout(120)
def test_a_backtracking_regex_is_stopped_after_its_time_with_a_sentence(store: MemoryStore) -> None:
    errors: list[str] = []
    found = list(grep(store, Pattern(CATASTROPHIC, regex=True), errors=errors, seconds=1))
    assert found == []
    assert len(errors) == 1
    assert "took more than 1 s and was stopped" in errors[0]
    assert search_children() == []  # the child was ended
    # A regex that ends is searched the same way, and finds what it did.
    found = list(grep(store, Pattern(r"and mo\w+", regex=True)))
    assert [(m.line, m.text, m.spans) for m in found] == [(2, "and more after it.", ((0, 8),))]
    assert search_children() == []


ORPHAN = """
import os, sys
from pathlib import Path
from memory.recall.search import Pattern, Places, grep
from tests.support import search_children

def cancelled():
    children = search_children()
    if children:  # the search runs: this process dies at once, as under kill -9
        print(children[0], flush=True)
        os._exit(0)
    return False

list(grep(Places(Path(sys.argv[1])), Pattern("(a+)+$", regex=True), seconds=1,
          cancelled=cancelled))
"""


def ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie is done
    except FileNotFoundError:
        return True


@LINUX
@pytest.mark.timeout(120)
def test_a_search_child_left_by_a_killed_app_ends_on_its_own(store: MemoryStore) -> None:
    out = subprocess.run(
        [sys.executable, "-c", ORPHAN, str(store.root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    pid = int(out.stdout.split()[0])
    # its CPU limit is 3 s; the box may be busy
    until_blocking(lambda: ended(pid), message="the orphaned search child to end")


@pytest.mark.timeout(120)
def test_kept_memory_grep_stops_a_backtracking_regex(
    store: MemoryStore, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory.recall.search.REGEX_SECONDS", 1.0)
    assert main(["memory", "grep", "-E", CATASTROPHIC]) == 2
    err = capsys.readouterr().err
    assert "took more than 1 s and was stopped; try a simpler one, or a plain word" in err
    assert "Traceback" not in err


@LINUX
@pytest.mark.timeout(120)
async def test_escape_leaves_a_backtracking_grep_and_ends_its_search(store: MemoryStore) -> None:
    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await open_regex_grep(pilot)
        await until(search_children, message="the search's child")
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, SearchScreen), message="Esc")
        await until(lambda: not search_children(), message="the child's end")


@pytest.mark.timeout(120)
async def test_a_regex_that_runs_too_long_in_grep_says_so(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory.recall.search.REGEX_SECONDS", 1.0)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await open_regex_grep(pilot)
        screen = app.screen
        summary = screen.query_one("#search-summary", Static)
        await until(lambda: "stopped" in str(summary.render()), message="the summary")
        assert str(summary.render()) == (
            f"No match. The regular expression {CATASTROPHIC!r} took more than 1 s and "
            "was stopped; try a simpler one, or a plain word."
        )


# --- credentials reach models despite redaction --------------------------------------------

KEY = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3h"
MISSED = {
    "a key continued after a line break": (
        f"my key:\n{KEY[:30]}\n{KEY[30:]}AbCdEf12\nthanks",
        ("my key:\n", "\nthanks"),
        (KEY[:30], KEY[30:]),
    ),
    "Stripe": (
        "stripe sk_live_51HxYzAbCdEfGhIjKlMnOpQr ok",
        ("stripe ", " ok"),
        ("sk_live_51Hx",),
    ),
    "Hugging Face": (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ok",
        (" ok",),
        ("hf_AbCd",),
    ),
    "GitLab": ("glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn ok", (" ok",), ("glpat-Ab1",)),
    "npm": ("npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ok", (" ok",), ("npm_AbCd",)),
    "Google OAuth": (
        "ya29.a0AfH6SMBx3Ab1Cd2Ef3Gh4Ij5Kl6Mn ok",
        (" ok",),
        ("ya29.a0AfH6",),
    ),
    "a ?key= query value": (
        "https://maps.example.org/api?q=Lisbon&key=abc123xyz789&lang=pt",
        ("https://maps.example.org/api?q=Lisbon&key=", "&lang=pt"),
        ("abc123xyz789",),
    ),
    "a URL-encoded key": (
        "see https%3A%2F%2Fexample.org%2Fcb%3Ftoken%3Dsk%2Dproj%2DAb3dE5gH7jK9mN1pQ3sT5vW7 now",
        ("see ", " now"),
        ("Ab3dE5gH7jK9mN1pQ3sT5vW7",),
    ),
    "a URL-encoded password": (
        "dsn=postgres%3A%2F%2Fana%3Ap%40ss%40w0rd%40db.example.org%2Fapp",
        ("db.example.org/app",),
        ("w0rd",),
    ),
    "a zero-width space inside a key": (
        "ghp_AbCdEfGhIjKlMnOpQr\u200bStUvWxYz0123456789 ok",
        (" ok",),
        ("ghp_AbCd", "StUvWxYz0123456789"),
    ),
    "a URL password holding @": (
        "postgres://ana:p@ss@w0rd@db.example.org/app",
        ("postgres://ana:", "@db.example.org/app"),
        ("p@ss", "w0rd"),
    ),
}


@pytest.mark.parametrize("name", list(MISSED))
def test_credentials_redaction_used_to_miss_are_redacted(name: str) -> None:
    text, kept, gone = MISSED[name]
    out = redact(text)
    assert REDACTED in out
    for part in kept:
        assert part in out
    for part in gone:
        assert part not in out


@pytest.mark.parametrize(
    "text",
    [
        "We need basic internationalization before the launch.",
        "Set token: limit in the config, then retry.",
        "pwd: /home/ana/src/kept",
        "Grandma's secret: recipe cards in the blue box.",
    ],
)
def test_words_that_are_not_credentials_survive(text: str) -> None:
    assert redact(text) == text


@pytest.mark.timeout(30)  # linear: well under a second; the quadratic scan took minutes
def test_redacting_many_key_begin_lines_without_an_end_is_linear() -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\n" * 20_000
    assert redact(text).count(REDACTED) == 20_000


@pytest.mark.timeout(30)  # the unbounded scheme scan took 41 s on 100 KB; this is 200 KB
def test_redacting_a_long_dotted_run_before_a_url_is_linear() -> None:
    text = "a." * 100_000 + " https://ana:pa55w0rd@example.org/"
    assert redact(text).endswith(f" https://ana:{REDACTED}@example.org/")


@pytest.mark.timeout(30)  # "eyJ-" * 100_000 took a minute: each "eyJ" scanned to the end
def test_redacting_long_runs_that_almost_look_like_credentials_is_linear() -> None:
    for text in ("eyJ-" * 100_000, "sk_live_short " * 20_000, "x" * 200_000 + "%zz"):
        assert redact(text) == text


def test_search_history_never_returns_a_credential_to_the_model(store: MemoryStore) -> None:
    store.history_path.write_text(
        f"[2026-11-20 10:00] Ana set up the deploy key {KEY} for the quokka app.\n\n"
    )
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": "quokka deploy: password=hunter2!"})
    journal.mark_pending(close=True)
    answer = run_search_tool(store, json.dumps({"pattern": "quokka"}))
    assert "Ana set up the deploy key [redacted secret] for the quokka app." in answer
    assert "user: quokka deploy: password=[redacted secret]" in answer
    assert KEY not in answer and "hunter2" not in answer


def test_remember_writes_no_credential_into_memory(store: MemoryStore) -> None:
    store.remember(f"My OpenAI key is {KEY[:30]}\n{KEY[30:]}AbCdEf12")
    memory = store.memory_path.read_text()
    assert "My OpenAI key is [redacted secret]" in memory
    assert KEY[:30] not in memory and KEY[30:] not in memory


# --- a long pending session's estimate -----------------------------------------------------

POLICY = replace(FAST_POLICY, retries=0, attempt_deadline=5.0)


def small_store() -> MemoryStore:
    return MemoryStore(
        settings=MemorySettings(attempt_deadline=5.0, consolidation_model=SMALL)
    ).ensure()


def measured(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the transcripts cut into parts by tokens (tokenising them)."""
    import memory.consolidation.walk
    from memory.consolidation.chunks import chunk_transcript as real

    calls: list[int] = []

    def spy(blocks: list[str], budget: int, *args: Any, **kwargs: Any) -> Any:
        calls.append(sum(len(b) for b in blocks))
        return real(blocks, budget, *args, **kwargs)

    monkeypatch.setattr(memory.consolidation.walk, "chunk_transcript", spy)
    return calls


async def test_an_unchanged_long_session_is_not_tokenised_again(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = small_store()
    words = " ".join(f"word{i}" for i in range(6000))
    pending_session(store, [{"role": "user", "content": words}])
    calls = measured(monkeypatch)
    catalog = fake_catalog(fake, entries=small_window_entries())
    (first,) = await consolidate_pending(store, catalog, policy=POLICY, max_parts=3)
    (again,) = await consolidate_pending(store, catalog, policy=POLICY, max_parts=3)
    assert first.estimate and again.estimate == first.estimate
    assert len(calls) == 1  # measured once; the second look used what it found
    assert fake.count() == 0


@pytest.mark.timeout(120)
async def test_a_huge_session_is_estimated_from_its_size_without_tokenising(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = small_store()
    huge = "\n".join(f"line {i} of a very long paste" for i in range(60_000))  # ~1.8 MB
    pending_session(store, [{"role": "user", "content": huge}])
    calls = measured(monkeypatch)
    catalog = fake_catalog(fake, entries=small_window_entries())
    (result,) = await consolidate_pending(store, catalog, policy=POLICY, max_parts=5)
    assert not result.saved and "requests" in result.estimate and "$" in result.estimate
    assert calls == []  # never tokenised
    assert fake.count() == 0


async def test_the_app_says_a_long_session_s_estimate_once(fake: FakeProvider) -> None:
    store = small_store()
    words = " ".join(f"word{i}" for i in range(6000))
    pending_session(store, [{"role": "user", "content": words}])

    app = make_app(fake, memory_settings=store.settings, entries=small_window_entries())
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(pilot)
        for _ in range(2):  # the retry every minute finds it again
            app.jobs.retry_due()
            await settle(pilot)
        said = [n for n in app._notifications if " is long: " in n.message]
        assert len(said) == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:  # colour on, as in a terminal
        return True


@pytest.mark.timeout(120)
def test_kept_memory_grep_in_colour_never_matches_a_regex_on_its_own_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "b" matches at once; highlighting the line would then try `(a+)+$` from each "a".
    store = MemoryStore().ensure()
    store.history_path.write_text(f"[2026-11-20 10:00] b{LINE}!\n\n")
    monkeypatch.setattr("memory.recall.search.REGEX_SECONDS", 1.0)
    monkeypatch.setattr(sys, "stdout", _Terminal())
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["memory", "grep", "-E", "b|(a+)+$"]) == 2
