"""Hostile inputs: what a provider or a damaged file sends never reaches the terminal raw,
never stops Kept, and never loses a message."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.screens.chat import ChatScreen
from app.screens.memory import MemoryScreen
from catalog import Catalog, Route
from memory import Consolidation, MemorySettings, MemoryStore, consolidate_pending
from memory.message import Message
from memory.sessions.journal import Journal
from tests.fakes.provider import FakeProvider, http_error, text, tool_call
from tests.support import (
    FAST_POLICY,
    SMALL,
    fake_catalog,
    make_app,
    nothing_new,
    pending_session,
    save_args,
    send,
    settle,
)

POLICY = replace(FAST_POLICY, retries=0, attempt_deadline=5.0)
# A window title (OSC 0), colours (CSI) and a clipboard write (OSC 52).
HOSTILE = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 boom\x9b2J"
CONSOLIDATION_CHAIN = (
    "llama-3.3-70b-versatile",
    "qwen/qwen3-32b",
    "meta-llama/llama-4-scout-17b-16e-instruct",
    "gpt-4.1-mini",
    "claude-haiku-4-5",
)


def raw_escapes(text: str) -> bool:
    return any(c in text for c in "\x1b\x07\x9b")


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()


def run_pending(store: MemoryStore, fake: FakeProvider, **kwargs: Any) -> list[Consolidation]:
    return asyncio.run(pending(store, fake, **kwargs))


async def pending(store: MemoryStore, fake: FakeProvider, **kwargs: Any) -> list[Consolidation]:
    return await consolidate_pending(store, fake_catalog(fake), policy=POLICY, **kwargs)


# --- 1. escape sequences -------------------------------------------------------------------


def test_escapes_in_error_bodies_and_tool_names_never_reach_files_or_output(
    store: MemoryStore, fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = pending_session(store)
    fake.set_default(CONSOLIDATION_CHAIN[0], http_error(500, message=HOSTILE))
    fake.set_default(CONSOLIDATION_CHAIN[1], tool_call(f"evil{HOSTILE}", save_args()))
    fake.default = text(f"prose {HOSTILE}")

    (result,) = run_pending(store, fake)

    assert not result.saved
    assert "boom" in result.reason and not raw_escapes(result.reason)
    assert all(not raw_escapes(a.reason) for a in result.attempts)
    assert "called evil" in result.attempts[1].reason
    assert not raw_escapes(store.log_path.read_text())
    assert "boom" in store.log_path.read_text()
    assert not raw_escapes(journal.path.read_text(encoding="utf-8"))
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert "boom" in out and not raw_escapes(out)


async def test_model_text_beside_a_history_search_is_journaled_clean(fake: FakeProvider) -> None:
    fake.script(
        "gpt-4.1-mini",
        tool_call("search_history", {"pattern": f"tea{HOSTILE}"}, content=f"Let me look {HOSTILE}"),
        text(f"Found it {HOSTILE}"),
    )

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "what do I drink?")
        from app.widgets.message import MessageView

        shown = [(v.who, v.text) for v in app.screen.query(MessageView)]
        assert all(not raw_escapes(f"{who}{body}") for who, body in shown)
        assert [m["role"] for m in app.session.messages] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        raw = app.session.journal.path.read_text(encoding="utf-8")
        assert "Let me look" in raw and not raw_escapes(raw)


def test_escapes_in_a_config_label_or_id_are_never_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        '[[models]]\nid = "mine"\nlabel = "My \\u001b]0;x\\u0007model"\n'
        'description = "d\\u001b[2J"\n\n'
        '[[models]]\nid = "bad\\u001b[31mid"\n'
    )
    assert main(["models"]) == 0
    captured = capsys.readouterr()
    assert "My model" in captured.out
    assert not raw_escapes(captured.out + captured.err)
    assert "bad" in captured.err  # the id is refused, by name, with its escapes removed


def test_escapes_already_in_a_journal_or_the_log_are_never_shown(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = pending_session(store, [{"role": "user", "content": "hi PLACE"}])
    journal.path.write_text(journal.path.read_text().replace("PLACE", json.dumps(HOSTILE)[1:-1]))
    with journal.path.open("a") as f:
        f.write(
            json.dumps(
                {
                    "mark": "failed",
                    "start": 0,
                    "end": 1,
                    "reason": f"old {HOSTILE}",
                    "time": "2026-11-30T10:00:00+00:00",
                }
            )
            + "\n"
        )
    store.log(
        {
            "session": journal.id,
            "segment": "0-1",
            "model": f"m{HOSTILE}",
            "outcome": "failed",
            "reason": f"logged {HOSTILE}",
        }
    )
    reloaded = store.find_session(journal.id)
    assert reloaded.messages[0]["content"] == "hi red  boom"
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert "old red  boom" in out and "logged" in out and not raw_escapes(out)


# --- 2. a full disk while sending --------------------------------------------------------------


def disk_full_after(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """Writes through memory.data.files succeed for `budget` bytes, then fail with ENOSPC,
    as on a nearly full filesystem (the part that fit is on disk: a torn line)."""
    import errno
    import os

    import memory.data.files

    left = [budget]

    def write_all(fd: int, data: bytes) -> None:
        fits = data[: left[0]]
        if fits:
            os.write(fd, fits)
            left[0] -= len(fits)
        if len(fits) < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(memory.data.files, "write_all", write_all)


async def test_a_full_disk_keeps_the_message_in_the_composer_and_tears_no_line(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.data.files

    fake.default = text("ok")
    message = "x" * 5000

    app = make_app(fake)
    async with app.run_test() as pilot:
        from app.widgets.composer import Composer
        from app.widgets.message import MessageView

        path = app.session.journal.path
        before = path.read_bytes()
        real = memory.data.files.write_all
        disk_full_after(monkeypatch, 1000)
        composer = app.screen.query_one(Composer)
        composer.load_text(message)
        await pilot.press("enter")
        await pilot.pause()
        assert path.read_bytes() == before  # no torn line
        assert composer.text == message  # nothing lost
        assert app.session.messages == []
        notice = list(app.screen.query(MessageView))[-1]
        assert notice.has_class("error")
        assert "No space left on device" in notice.text and path.name in notice.text
        assert fake.count() == 0
        monkeypatch.setattr(memory.data.files, "write_all", real)  # space again
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        await app.screen.reply_finished()
        assert app.session.messages[0]["content"] == message


def test_a_failed_write_names_its_file_and_leaves_the_file_as_it_was(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.data.files import append_line, atomic_write

    target = store.root / "f.jsonl"
    target.write_text('{"a":1}\n')
    disk_full_after(monkeypatch, 3)
    with pytest.raises(OSError) as caught:
        append_line(target, '{"b":2}')
    assert caught.value.filename == str(target)
    assert target.read_text() == '{"a":1}\n'
    with pytest.raises(OSError) as caught:
        atomic_write(store.memory_path, "new memory")
    assert caught.value.filename == str(store.memory_path)
    assert sorted(p.name for p in store.root.iterdir() if p.is_file()) == ["f.jsonl"]


# --- 3. one bad file in sessions/ ----------------------------------------------------------


async def test_an_unreadable_file_in_sessions_is_skipped_with_a_warning(
    store: MemoryStore, fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = pending_session(store)
    (store.sessions_dir / "x.jsonl").mkdir()
    fake.default = tool_call("save_memory", save_args())

    assert main(["log"]) == 0
    assert "x.jsonl" in capsys.readouterr().err
    main(["doctor"])
    captured = capsys.readouterr()
    assert "x.jsonl" in captured.out + captured.err
    (result,) = await pending(store, fake)
    assert result.saved and result.session == journal.id
    assert any("x.jsonl" in w for w in store.scan_sessions().unreadable.values())

    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert any("x.jsonl" in p for p in app.problems)


# --- 4. one bad session never blocks the others -------------------------------------------


def test_an_import_with_a_malformed_tool_call_skips_that_line(
    store: MemoryStore, fake: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "chat.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(m)
            for m in [
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": None, "tool_calls": [{"function": "x"}]},
                {"role": "assistant", "content": "hi"},
            ]
        )
        + "\n"
    )
    assert main(["import", str(source)]) == 0
    assert "chat.jsonl:2: skipped" in capsys.readouterr().err
    # The same line written straight into a journal is skipped on load, too.
    journal = pending_session(store, [{"role": "user", "content": "two"}])
    with journal.path.open("a") as f:
        f.write(
            json.dumps({"role": "assistant", "content": None, "tool_calls": [{"function": "x"}]})
            + "\n"
        )
    fake.default = tool_call("save_memory", nothing_new())
    results = run_pending(store, fake)
    assert [r.saved for r in results] == [True, True]


def test_a_time_past_the_calendar_in_a_far_time_zone_is_no_crash(
    store: MemoryStore, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    with monkeypatch.context() as local:
        local.setenv("TZ", "Asia/Tokyo")
        time.tzset()
        try:
            pending_session(
                store, [{"role": "user", "content": "hi", "time": "9999-12-31T23:59:59+00:00"}]
            )
            fake.default = tool_call("save_memory", nothing_new())
            (result,) = run_pending(store, fake)
            assert result.saved
        finally:
            local.undo()
            time.tzset()


def test_a_reply_that_breaks_the_check_is_that_replys_rejection(
    store: MemoryStore, fake: FakeProvider
) -> None:
    pending_session(store)
    deep = '{"history_entry": ' + "[" * 50_000 + "]" * 50_000 + ', "memory_update": ""}'
    fake.set_default(CONSOLIDATION_CHAIN[0], tool_call("save_memory", deep))
    fake.default = tool_call("save_memory", save_args())
    (result,) = run_pending(store, fake)
    assert result.saved and result.model == "qwen3-32b"
    assert result.attempts[0].outcome.value == "rejected"
    assert "RecursionError" in result.attempts[0].reason


def test_a_session_that_fails_to_consolidate_does_not_stop_the_next(
    store: MemoryStore, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.consolidation.walk

    first = pending_session(store, [{"role": "user", "content": "boom-session"}])
    second = pending_session(store, [{"role": "user", "content": "fine"}])
    real = memory.consolidation.walk.transcript_lines  # type: ignore[attr-defined]

    def transcript_lines(messages: list[Message]) -> list[str]:
        if any(m.get("content") == "boom-session" for m in messages):
            raise RuntimeError("cannot build this prompt")
        return real(messages)

    monkeypatch.setattr(memory.consolidation.walk, "transcript_lines", transcript_lines)
    fake.default = tool_call("save_memory", nothing_new())
    results = run_pending(store, fake)
    by_id = {r.session: r for r in results}
    assert len(results) == 2 and by_id[second.id].saved and not by_id[first.id].saved
    assert "cannot build this prompt" in by_id[first.id].reason
    assert store.find_session(first.id).failures  # recorded, retried later


# --- 5. a wrong-typed field in the live journal ----------------------------------------------


async def test_a_wrong_typed_field_in_the_live_journal_does_not_stop_the_app(
    fake: FakeProvider,
) -> None:
    store = MemoryStore().ensure()
    path = store.sessions_dir / "20261130-100000-abcdef.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"kept": "session", "version": 1, "id": path.stem, "created": "x", "model": ["x"]},
                {"role": "user", "content": "hi", "time": "2026-11-30T10:00:00+00:00"},
                {"role": "assistant", "content": "hello", "model": ["x"], "name": 3},
            ]
        )
        + "\n"
    )

    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.pause()
        from app.widgets.message import MessageView

        assert app.session.id == path.stem
        assert [v.text for v in app.screen.query(MessageView)] == ["hi", "hello"]


def test_the_command_exits_non_zero_when_the_app_crashed(fake: FakeProvider) -> None:
    from app.main import KeptApp, run

    class Crashing(KeptApp):
        def on_mount(self) -> None:
            raise RuntimeError("broken")

    app = make_app(fake)
    app.__class__ = Crashing
    assert run(app, headless=True) == 1


# --- 6. an interrupted import ------------------------------------------------------------------


def test_an_interrupted_import_leaves_nothing_behind(
    store: MemoryStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import memory.data.files

    source = tmp_path / "big.jsonl"
    source.write_text(
        "".join(json.dumps({"role": "user", "content": f"m{i}"}) + "\n" for i in range(2000))
    )

    def interrupted(fd: int, data: bytes) -> None:
        import os

        os.write(fd, data[: len(data) // 2])
        raise KeyboardInterrupt

    with monkeypatch.context() as local:
        local.setattr(memory.data.files, "write_all", interrupted)
        assert main(["import", str(source)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err
    assert [p.name for p in store.sessions_dir.iterdir() if p.is_file()] == []
    assert main(["import", str(source)]) == 0
    (journal,) = store.open_sessions()
    assert journal.state == "pending" and len(journal.messages) == 2000


# --- 7. symbolic links are never written through ---------------------------------------------


def test_a_symlinked_journal_is_not_written_through(store: MemoryStore, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    journal = store.new_session("gpt-4.1-mini")
    journal.path.unlink()
    journal.path.symlink_to(victim)
    with pytest.raises(OSError) as caught:
        journal.append({"role": "user", "content": "hello"})
    assert "symbolic link" in str(caught.value) and journal.path.name in str(caught.value)
    assert victim.read_text() == "precious\n"
    scan = store.scan_sessions()
    assert scan.journals == []  # not read through either
    assert any("symbolic link" in s for s in scan.unreadable.values())


def test_a_symlinked_memory_file_is_refused_and_left_alone(
    store: MemoryStore, fake: FakeProvider, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "dotfiles-memory.md"
    elsewhere.write_text("# Mine\n")
    store.memory_path.symlink_to(elsewhere)
    pending_session(store)
    fake.default = tool_call("save_memory", save_args())
    (result,) = run_pending(store, fake)
    assert not result.saved and "symbolic link" in result.reason
    assert store.memory_path.is_symlink() and elsewhere.read_text() == "# Mine\n"


def test_a_symlinked_config_is_written_at_its_target(tmp_path: Path) -> None:
    from app.settings import save_setting

    target = tmp_path / "dotfiles-config.toml"
    target.write_text('# my settings\n[app]\ntheme = "kept-dark"\n')
    link = tmp_path / "config" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(target)
    save_setting("app", "theme", "kept-light", link)
    assert link.is_symlink() and "kept-light" in target.read_text()
    assert "# my settings" in target.read_text()


# --- 8. every key Kept knows is redacted ---------------------------------------------------------


def test_a_key_echoed_by_another_gateway_is_redacted_everywhere(
    store: MemoryStore, fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support import fake_keys

    anthropic_key = fake_keys()["ANTHROPIC_API_KEY"]
    journal = pending_session(store)
    fake.set_default(
        CONSOLIDATION_CHAIN[0],
        http_error(500, message=f"upstream said: invalid key {anthropic_key}"),
    )
    fake.default = text("prose")
    (result,) = run_pending(store, fake)
    assert not result.saved and "***" in result.attempts[0].reason
    for where in (
        result.reason,
        store.log_path.read_text(),
        journal.path.read_text(encoding="utf-8"),
    ):
        assert anthropic_key not in where


# --- 9. a broken gateway table never falls back to the public endpoint -------------------------


def write_config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def gateway_state(catalog: Catalog, gateway: str) -> Route:
    entry = next(e for e in catalog.entries if e.gateway == gateway)
    return catalog.route(entry)


@pytest.mark.parametrize(
    "body",
    [
        '[gateways.groq]\nbase_url = "htp:/typo"\n',
        '[gateways.groq]\nbase_url = "https://user:secret@proxy.example/v1"\n',
        '[gateways.groq]\nbase_url = "https://proxy.example/v1\\u0007"\n',
        '[gateways.groq]\nbase_ur = "https://proxy.example/v1"\n',
        '[gateways.groq]\nbase_url = "https://proxy.example/v1"\n[app\nmodel = 1\n',
    ],
)
def test_an_invalid_gateway_table_makes_that_gateway_unusable(tmp_path: Path, body: str) -> None:
    from app.settings import load_settings
    from catalog import load_catalog

    catalog = load_catalog(load_settings(write_config(tmp_path, body)).catalog)
    groq = gateway_state(catalog, "groq")
    assert not groq.key.usable and "gateways.groq" in (groq.problem or "")
    assert "https://api.groq.com" not in (groq.api_base or "") or not groq.key.usable
    assert catalog.problems
    assert gateway_state(catalog, "openai").problem != groq.problem


async def test_a_model_on_a_broken_gateway_is_skipped_without_a_request(
    tmp_path: Path, store: MemoryStore, fake: FakeProvider
) -> None:
    from app.settings import load_settings
    from catalog import Catalog, KeyStore, complete
    from tests.support import fake_keys

    config = load_settings(write_config(tmp_path, "[gateways.groq]\nbase_url = 3\n")).catalog
    catalog = Catalog(config=config, keys=KeyStore(environ=fake_keys()))
    result = await complete(
        catalog,
        "llama-3.3-70b-versatile",
        [{"role": "user", "content": "hi"}],
        policy=POLICY,
        walk_chain=False,
    )
    assert not result.ok and result.attempts[0].outcome.value == "skipped"
    assert "gateways.groq" in result.attempts[0].reason


# --- 12. an unreadable MEMORY.md -----------------------------------------------------------------


async def test_an_unreadable_memory_file_is_named_everywhere_and_costs_no_request(
    store: MemoryStore, fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store.memory_path.mkdir()
    assert main(["memory", "show"]) == 2
    err = capsys.readouterr().err
    assert "MEMORY.md" in err and "Traceback" not in err
    assert main(["doctor"]) == 1
    assert "MEMORY.md" in capsys.readouterr().out
    pending_session(store)
    fake.default = tool_call("save_memory", save_args())
    (result,) = await pending(store, fake)
    assert not result.saved and "MEMORY.md" in result.reason
    assert fake.count() == 0

    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+p")  # any key first: the app is alive
        await pilot.press("escape")
        app.action_memory()
        await pilot.pause()
        from textual.widgets import Static

        status = app.screen.query_one("#memory-status", Static)
        assert "MEMORY.md" in str(status.render())
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen) and app.screen.editing is False


def test_a_read_only_memory_file_is_respected_and_said(
    store: MemoryStore, fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store.memory_path.write_text("# Mine, frozen\n")
    store.memory_path.chmod(0o444)
    pending_session(store)
    fake.default = tool_call("save_memory", save_args())
    (result,) = run_pending(store, fake)
    assert not result.saved and "read-only" in result.reason and fake.count() == 0
    with pytest.raises(OSError, match="read-only"):
        store.save_edit("changed", store.read_memory().digest)
    assert store.memory_path.read_text() == "# Mine, frozen\n"
    assert main(["doctor"]) == 1
    assert "read-only" in capsys.readouterr().out


# --- 10. sessions that can never be saved ------------------------------------------------------

KNOWN = "# About the user\n" + "".join(f"- fact number {i} about the user\n" for i in range(20))


def test_a_deliberate_forget_is_let_through_and_versioned(
    store: MemoryStore, fake: FakeProvider
) -> None:
    store.write_memory(KNOWN)
    pending_session(
        store,
        [
            {"role": "user", "content": "Please forget everything you know about me."},
            {"role": "assistant", "content": "Done."},
        ],
    )
    forget = save_args(memory="", base=KNOWN, quote="forget everything you know about me")
    fake.default = tool_call("save_memory", forget)
    (result,) = run_pending(store, fake)
    assert result.saved
    assert store.memory_path.read_text() == ""  # headings alone are not kept
    assert any(v.path.read_text() == KNOWN for v in store.versions())


def test_a_forget_nobody_asked_for_is_still_refused(store: MemoryStore, fake: FakeProvider) -> None:
    store.write_memory(KNOWN)
    pending_session(store, [{"role": "user", "content": "I moved to Bern."}])
    fake.default = tool_call("save_memory", save_args(memory="", base=KNOWN, quote="moved to Bern"))
    (result,) = run_pending(store, fake)
    assert not result.saved and "the user did not ask to forget it" in result.reason


async def test_identical_rejections_stop_automatic_retries_and_the_app_asks(
    store: MemoryStore, fake: FakeProvider
) -> None:
    journal = pending_session(store)
    fake.default = text("I would rather chat.")
    for _ in range(3):
        (result,) = await pending(store, fake)
        assert not result.saved
    asked = fake.count()
    assert await pending(store, fake, include_held=False) == []
    assert fake.count() == asked  # no more money spent on the same answer

    app = make_app(fake)
    async with app.run_test() as pilot:
        from tests.support import settle

        await settle(pilot)
        assert fake.count() == asked
        messages = app.notices
        assert any(journal.id in m and "Retry" in m for m in messages)
    (result,) = await pending(store, fake)  # asking by hand still tries
    assert fake.count() > asked


def test_a_binary_memory_file_is_named_as_the_cause(store: MemoryStore, fake: FakeProvider) -> None:
    store.memory_path.write_bytes(b"\x00\x01\xff" * 200)
    pending_session(store)
    fake.default = tool_call("save_memory", save_args(memory="x"))
    (result,) = run_pending(store, fake)
    assert not result.saved and "MEMORY.md may be the cause" in result.reason
    assert "not valid UTF-8" in result.reason


# --- 11. a large pending session neither freezes the app nor spends without asking -------------


def on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def small_window_catalog(fake: FakeProvider) -> Catalog:
    from tests.support import small_window_entries

    return fake_catalog(fake, entries=small_window_entries())


def big_session(store: MemoryStore) -> Journal:
    words = " ".join(f"word{i}" for i in range(6000))
    return pending_session(store, [{"role": "user", "content": words}])


async def test_token_counting_and_journal_loading_run_off_the_event_loop(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.consolidation.walk
    import memory.sessions.journal

    store = MemoryStore(
        settings=MemorySettings(attempt_deadline=5.0, consolidation_model=SMALL)
    ).ensure()
    big_session(store)
    on_the_loop: list[str] = []
    for module, name in (
        (memory.sessions.journal, "load"),
        (memory.consolidation.walk, "chunk_transcript"),
        (memory.consolidation.walk, "transcript_budget"),
    ):
        real = getattr(module, name)

        def spy(*args: Any, real: Any = real, name: str = name, **kwargs: Any) -> Any:
            if on_loop():
                on_the_loop.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    fake.default = tool_call("save_memory", nothing_new())
    results = await consolidate_pending(store, small_window_catalog(fake), policy=POLICY)
    assert results and all(r.saved for r in results)
    assert on_the_loop == []


async def test_a_session_needing_many_requests_asks_first(
    fake: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore(
        settings=MemorySettings(attempt_deadline=5.0, consolidation_model=SMALL)
    ).ensure()
    journal = big_session(store)
    fake.default = tool_call("save_memory", nothing_new())
    catalog = small_window_catalog(fake)
    (result,) = await consolidate_pending(store, catalog, policy=POLICY, max_parts=3)
    assert not result.saved and result.estimate
    assert "requests" in result.reason and "$" in result.reason
    assert fake.count() == 0
    assert not store.find_session(journal.id).failures  # not a failure: a question
    (result,) = await consolidate_pending(store, catalog, policy=POLICY)
    assert result.saved and fake.count() > 3


async def test_the_app_checks_pending_sessions_off_the_event_loop(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.sessions.pending

    calls: list[bool] = []
    real = memory.sessions.pending.pending

    def spy(store: MemoryStore) -> Any:
        calls.append(on_loop())
        return real(store)

    monkeypatch.setattr(memory.sessions.pending, "pending", spy)

    app = make_app(fake)
    async with app.run_test() as pilot:
        from tests.support import settle

        await settle(pilot)
        app.jobs.retry_due()
        app.jobs.refresh_status()
        await settle(pilot)
    assert calls and not any(calls)


def test_kept_consolidate_shows_the_estimate_and_goes_ahead_with_yes(
    fake: FakeProvider,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.settings import load_settings
    from catalog import load_catalog

    config = write_config(
        tmp_path,
        f'[memory]\nconsolidation_model = "{SMALL}"\n'
        f'[gateways.openai]\nbase_url = "{fake.base_url("openai")}"\n'
        f'[[models]]\nid = "{SMALL}"\ngateway = "openai"\n'
        "context_window = 2000\n",
    )
    assert not load_catalog(load_settings(config).catalog).problems
    journal = big_session(MemoryStore().ensure())
    fake.default = tool_call("save_memory", nothing_new())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-0123456789")
    assert main(["consolidate"]) == 1
    out = capsys.readouterr().out
    assert f"--yes {journal.id}" in out and "requests" in out and fake.count() == 0
    assert main(["consolidate", "--yes"]) == 0
    assert "saved" in capsys.readouterr().out


# --- 13. leftovers and the user's modes ---------------------------------------------------------


def dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def test_temporary_copies_left_by_a_kill_are_removed_at_start(store: MemoryStore) -> None:
    import os

    from memory.consolidation.commit import recover

    dead = dead_pid()
    leftovers = [
        store.root / f".MEMORY.md.{dead}.tmp",
        store.root / f".commit.json.{dead}.tmp",
        store.versions_dir / f".000001.md.{dead}.tmp",
        store.sessions_dir / f".x.jsonl.{dead}.tmp",
    ]
    live = store.root / f".HISTORY.md.{os.getpid()}.tmp"  # a write under way: left alone
    for path in (*leftovers, live):
        path.write_text("a full copy of memory")
    recover(store)
    assert not any(p.exists() for p in leftovers)
    assert live.exists()


def test_a_read_only_data_folder_is_respected_and_said(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.main import run

    pending_session(store)
    store.root.chmod(0o500)
    try:
        with pytest.raises(OSError, match="read-only"):
            store.ensure()
        assert main(["consolidate"]) == 2
        assert "read-only" in capsys.readouterr().err
        assert run() == 2
        assert "read-only" in capsys.readouterr().err
        assert oct(store.root.stat().st_mode & 0o777) == "0o500"
    finally:
        store.root.chmod(0o700)


# --- 14. smaller ones --------------------------------------------------------------------------


def test_a_config_nested_a_thousand_deep_is_a_problem_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.settings import load_settings

    write_config(tmp_path, "a = " + "[" * 1000 + "]" * 1000 + "\n")
    assert main(["models"]) == 0
    assert "config.toml" in capsys.readouterr().err
    assert load_settings().problems


def test_kept_models_all_caps_each_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count = 3000
    write_config(
        tmp_path, "".join(f'[[models]]\nid = "m{i}"\nfallback = "m{i + 1}"\n' for i in range(count))
    )
    assert main(["models", "--all"]) == 0
    out = capsys.readouterr().out
    chains = [line for line in out.splitlines() if line.startswith("  m")]
    assert len(chains) == count
    assert max(len(line) for line in chains) < 400
    assert "more" in chains[0]


async def test_two_overlapping_consolidations_both_see_the_session_saved(
    store: MemoryStore, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib
    import threading

    import memory.consolidation.run
    from tests.fakes.provider import hang

    pending_session(store)
    busy = threading.Event()
    real = memory.consolidation.run.locked  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def spy(path: Path, *, blocking: bool = True) -> Iterator[bool]:
        with real(path, blocking=blocking) as mine:
            if not mine:
                busy.set()
            yield mine

    monkeypatch.setattr(memory.consolidation.run, "locked", spy)
    fake.script(CONSOLIDATION_CHAIN[0], hang())
    fake.default = tool_call("save_memory", save_args())
    catalog = fake_catalog(fake)

    async def both() -> tuple[list[Consolidation], list[Consolidation]]:
        first = asyncio.create_task(consolidate_pending(store, catalog, policy=POLICY))
        assert await asyncio.to_thread(fake.wait_for_requests, 1)
        second = asyncio.create_task(consolidate_pending(store, catalog, policy=POLICY))
        assert await asyncio.to_thread(busy.wait, 30)
        fake.release()
        return await first, await second

    (one,), (two,) = await both()
    assert one.saved and two.saved


def test_a_journal_whose_header_names_another_id_is_really_saved(
    store: MemoryStore, fake: FakeProvider
) -> None:
    journal = pending_session(store)
    renamed = store.sessions_dir / "20261130-000000-aaaaaa.jsonl"
    journal.path.rename(renamed)
    fake.default = tool_call("save_memory", save_args())
    (result,) = run_pending(store, fake)
    assert result.saved and result.model and result.session == renamed.stem
    assert fake.count() == 1 and len(store.history_entries()) == 1
    assert run_pending(store, fake) == []  # saved for good, not "saved" again each run


def test_a_file_the_command_line_cannot_read_is_one_sentence(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    store.log_path.mkdir()
    assert main(["log"]) == 2
    err = capsys.readouterr().err
    assert "consolidation.jsonl" in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_full_disk_during_consolidation_names_the_file_and_loses_nothing(
    store: MemoryStore, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = pending_session(store)
    before = journal.path.read_bytes()
    fake.default = tool_call("save_memory", save_args())
    disk_full_after(monkeypatch, 0)
    (result,) = run_pending(store, fake)
    assert not result.saved and "No space left on device" in result.reason
    assert str(store.root) in result.reason  # which file, not "a file"
    assert journal.path.read_bytes() == before and not store.memory_path.exists()
