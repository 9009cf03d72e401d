"""The rough edges of a first hour with Kept, each pinned: Pilot, CLI and file tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, OptionList, Static

from app.widgets.composer import Composer
from catalog import ModelEntry
from tests.fakes.keyring_backend import MemoryKeyring
from tests.fakes.provider import FakeProvider
from tests.support import gateways_toml, make_app, settle, until

if TYPE_CHECKING:
    from app.main import KeptApp


async def composer_ready(pilot: Pilot[Any]) -> Composer:
    # Keys before focus are lost.
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    composer = pilot.app.focused
    assert isinstance(composer, Composer)
    return composer


def read_at_once(app: KeptApp, *keys: str) -> None:
    """Keys as one read from the terminal delivers them: queued together, no pause."""
    for key in keys:
        event = events.Key(key, None)
        event.set_sender(app)
        driver = app._driver
        assert driver is not None
        driver.send_message(event)


# --- 1. keys --------------------------------------------------------------------------------


def test_the_parser_reads_esc_cr_as_alt_enter() -> None:
    from textual._xterm_parser import XTermParser

    import app.widgets.composer  # noqa: F401  (teaches the parser)

    keys = [e.key for e in XTermParser().feed("\x1b\r") if isinstance(e, events.Key)]
    assert keys == ["alt+enter"]


async def test_tab_then_enter_in_one_read_completes_before_sending(fake: FakeProvider) -> None:
    from app.screens.help import HelpScreen

    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/he")
        read_at_once(app, "tab", "enter")
        for _ in range(100):  # a bounded wait: the wrong outcome must fail, not hang
            if isinstance(app.screen, HelpScreen):
                break
            await pilot.pause()
        assert isinstance(app.screen, HelpScreen), "Enter sent /he before Tab completed"


# --- 2. a broken stream ---------------------------------------------------------------------


async def test_a_broken_stream_keeps_the_partial_reply_on_screen_and_in_the_journal(
    fake: FakeProvider,
) -> None:
    from app.widgets.message import MessageView
    from tests.fakes.provider import cut
    from tests.support import send

    fake.script("gpt-4.1-mini", cut(after_chunks=6))

    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await send(pilot, "tell me a long story")
        reply, notice = list(app.screen.query(MessageView))[-2:]
        assert "partial0 partial1" in reply.text and "partial5" in reply.text
        assert reply.who.endswith("cut off")
        assert notice.has_class("error") and "was cut off" in notice.text
        assert len(fake.requests) == 1  # no other model replaced what was read
        last = app.session.messages[-1]
        said = last["content"] or ""
        assert last["role"] == "assistant" and "partial5" in said
        assert said.endswith("*[reply cut off]*")


# --- 8. failure notices ---------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def local_app(base_url: str, env: dict[str, str] | None = None, model: str = "smollm2") -> KeptApp:
    """The app chatting with a user's model on the keyless local gateway at `base_url`."""
    import tomllib

    from app.main import KeptApp
    from app.settings import AppSettings, Settings, config_path
    from catalog import Catalog, KeyStore
    from catalog.config import parse_catalog_config
    from memory import MemorySettings, MemoryStore
    from tests.support import FAST_POLICY

    config = parse_catalog_config(
        tomllib.loads(f'[gateways.local]\nbase_url = "{base_url}"\n\n[[models]]\nid = "smollm2"\n')
    )
    settings = Settings(AppSettings(model=model), MemorySettings(attempt_deadline=5.0), ())
    return KeptApp(
        store=MemoryStore(settings=settings.memory),
        settings=settings,
        catalog=Catalog(config=config, keys=KeyStore(environ=env or {})),
        policy=FAST_POLICY,
        config_path=config_path(),
    )


async def failure_of(app: KeptApp) -> str:
    from app.widgets.message import MessageView
    from tests.support import send

    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await send(pilot, "hello")
        notice = list(app.screen.query(MessageView))[-1]
        assert notice.has_class("error")
        return notice.text


async def test_a_no_key_failure_is_three_short_lines_with_grouped_reasons(
    fake: FakeProvider,
) -> None:
    text = await failure_of(make_app(fake, env={"DEEPSEEK_API_KEY": "sk-test-1234567"}))
    lines = text.splitlines()
    assert len(lines) == 3 and all(len(line) < 100 for line in lines), text
    assert lines[1].startswith("Why: no key for OpenAI, Anthropic"), text
    assert "/keys" in lines[2]
    assert text.count("No key for") == 0 and ".." not in text and ".;" not in text


async def test_a_refused_local_server_is_named_and_not_sent_to_keys() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    text = await failure_of(local_app(url))
    lines = text.splitlines()
    assert len(lines) == 3, text
    assert url in lines[1] and url in lines[2], text
    assert "/keys" not in text


# --- 7. the status bar ----------------------------------------------------------------------


async def test_a_brand_new_data_folder_does_not_say_memory_saved(fake: FakeProvider) -> None:
    from tests.support import settle

    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert str(app.memory_status) == "No memory saved yet"


async def test_a_resumed_session_counts_its_tokens_on(fake: FakeProvider) -> None:
    from app.widgets.status_bar import StatusBar
    from tests.support import send

    async def first() -> tuple[int, float]:
        app = make_app(fake)
        async with app.run_test() as pilot:
            await composer_ready(pilot)
            await send(pilot, "hello")
            bar = app.screen.query_one(StatusBar)
            return bar.tokens, bar.cost

    async def second() -> tuple[int, float]:
        app = make_app(fake)
        async with app.run_test() as pilot:
            await composer_ready(pilot)
            await settle(pilot)  # the resumed session is found after the first frame
            bar = app.screen.query_one(StatusBar)
            return bar.tokens, bar.cost

    tokens, cost = await first()
    assert tokens > 0
    again_tokens, again_cost = await second()
    assert again_tokens == tokens and again_cost == pytest.approx(cost)  # summed afresh


async def test_one_failing_memory_job_of_two_leaves_the_counter_right(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.consolidation.run
    from tests.support import pending_session, settle

    real = memory.consolidation.run.consolidate
    failed = asyncio.Event()
    calls = []

    async def first_fails(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            failed.set()
            raise OSError("disk went away")
        await failed.wait()
        return await real(*args, **kwargs)

    monkeypatch.setattr(memory.consolidation.run, "consolidate", first_fails)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        for journal in (pending_session(app.store), pending_session(app.store)):
            app.jobs.save(journal, journal.pending[0])
        await settle(pilot)
        assert app.jobs.running == 0
        assert str(app.memory_status) != "Saving memory…"


# --- 15. small ones -------------------------------------------------------------------------


def test_kept_version(capsys: pytest.CaptureFixture[str]) -> None:
    import pytest

    from app.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("kept 0.")


def test_consolidate_prints_each_sessions_attempts_before_its_line(
    fake: FakeProvider, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.cli.main import main
    from app.settings import config_path
    from memory import MemoryStore
    from tests.fakes.provider import http_error, tool_call
    from tests.support import fake_keys, pending_session, save_args

    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(gateways_toml(fake))
    for name, value in fake_keys().items():
        monkeypatch.setenv(name, value)
    fake.set_default("llama-3.3-70b-versatile", http_error(400))
    fake.default = tool_call("save_memory", save_args())
    store = MemoryStore().ensure()
    first, second = pending_session(store), pending_session(store)
    assert main(["consolidate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    sessions = [i for i, line in enumerate(lines) if line.startswith("Session ")]
    assert len(sessions) == 2 and {first.id, second.id} <= {
        lines[i].split()[1].rstrip(":") for i in sessions
    }
    assert lines[0].startswith("  llama-3.3-70b-versatile")
    assert lines[sessions[0] + 1].startswith("  llama-3.3-70b-versatile"), lines


async def test_theme_and_model_commands_take_a_name(fake: FakeProvider) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/theme kept-light", "enter")
        await pilot.pause()
        assert app.theme == "kept-light"
        await pilot.press(*"/model claude-haiku-4-5", "enter")
        await pilot.pause()
        assert app.model == "claude-haiku-4-5"
        assert app.screen is app.screen_stack[0]  # no picker opened over the chat


def notices(app: KeptApp) -> list[str]:
    return app.notices


async def test_export_goes_to_the_exports_folder_and_names_a_bad_path(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/export", "enter")
        await pilot.pause()
        exported = app.store.root / "exports" / f"kept-{app.session.id}.md"
        assert exported.exists() and not list(tmp_path.glob("kept-*.md"))
        assert any(str(exported) in n for n in notices(app))
        await pilot.press(*"/export /nonexistent/x.md", "enter")
        await pilot.pause()
        assert any("/nonexistent/x.md" in n for n in notices(app)), notices(app)


def test_memory_grep_ignores_case_by_default_like_grep_screen(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.cli.main import main
    from memory import MemoryStore

    MemoryStore().ensure().append_history("[2026-11-01 09:00] Talked about Green Tea.")
    assert main(["memory", "grep", "green tea"]) == 0
    assert main(["memory", "grep", "-s", "green tea"]) == 1


def test_lock_files_of_settled_sessions_do_not_pile_up(fake: FakeProvider) -> None:
    from app.cli.main import main
    from memory import MemoryStore
    from tests.support import pending_session

    store = MemoryStore().ensure()
    journal = pending_session(store, messages=[])
    (store.sessions_dir / f".{journal.id}.live").touch()
    (store.sessions_dir / f".{journal.id}.claim").touch()
    main(["consolidate"])
    assert not list(store.sessions_dir.glob(".*")), list(store.sessions_dir.iterdir())


async def test_the_palette_offers_one_command_for_pending_memory(fake: FakeProvider) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles.count("Save pending memory now") == 1
        assert not any("Retry pending" in t for t in titles)


async def test_an_unknown_theme_in_config_is_not_rewritten(fake: FakeProvider) -> None:
    from app.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text('[app]\ntheme = "nope"\n')

    app = make_app(fake, theme="nope")
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        assert app.theme == "kept-dark"
    assert path.read_text() == '[app]\ntheme = "nope"\n'


def test_the_licence_is_an_spdx_string_so_setup_does_not_warn() -> None:
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert isinstance(project["project"]["license"], str)
    assert "setuptools>=77" in project["build-system"]["requires"]


# --- 4. a data folder that cannot be used ---------------------------------------------------


def test_every_verb_and_the_app_name_a_data_folder_that_is_a_file(tmp_path: Path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    from tests.support import subprocess_env

    kept = Path(sys.executable).with_name("kept")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    env = subprocess_env(
        KEPT_DATA_DIR=str(blocker),
        KEPT_CONFIG_DIR=str(tmp_path / "c"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    for argv in (
        [],
        ["memory", "grep", "x"],
        ["memory", "show"],
        ["log"],
        ["doctor"],
        ["consolidate"],
        ["memory", "versions"],
    ):
        done = subprocess.run(
            [str(kept), *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        assert str(blocker) in done.stderr and done.stderr.count("\n") == 1, (argv, done.stderr)


# --- 6. kept import -------------------------------------------------------------------------


def test_import_rejects_a_message_with_no_text_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main
    from memory import MemoryStore

    path = tmp_path / "chat.jsonl"
    path.write_text('{"role":"user","content":"hi"}\n{"role":"user"}\n')
    assert main(["import", str(path)]) == 2
    assert f"{path}:2:" in capsys.readouterr().err
    assert not MemoryStore().pending_sessions()


def test_import_keeps_the_original_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main
    from memory import MemoryStore

    path = tmp_path / "chat.jsonl"
    path.write_text(
        '{"role":"user","content":"a","timestamp":"2026-11-20T09:15:00Z"}\n'
        '{"role":"assistant","content":"b","created_at":1763630160}\n'
        '{"role":"user","content":"c","time":"2026-11-20T09:17:00+00:00"}\n'
    )
    assert main(["import", str(path)]) == 0
    (journal,) = MemoryStore().pending_sessions()
    assert [m["time"] for m in journal.messages] == [
        "2026-11-20T09:15:00+00:00",
        "2025-11-20T09:16:00+00:00",
        "2026-11-20T09:17:00+00:00",
    ]


# --- 5. kept doctor -------------------------------------------------------------------------


def test_doctor_names_an_unknown_app_model_and_a_bad_consolidation_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.cli.main import main
    from app.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text('[app]\nmodel = "gpt-9-ultra"\n[memory]\nconsolidation_model = "nope"\n')
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "problem: config.toml: [app] model 'gpt-9-ultra' is not a model Kept knows" in out
    assert "problem: [memory] consolidation_model: Unknown model 'nope'" in out


def test_bad_toml_is_one_problem_in_doctor_and_one_notice_in_the_app(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.cli.main import main
    from app.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text("[app\nmodel = \n")
    assert main(["doctor"]) == 1
    assert capsys.readouterr().out.count("is not valid TOML") == 1

    from app.main import KeptApp

    app = KeptApp()
    assert sum("is not valid TOML" in p for p in app.problems) == 1
    app.session.release()


# --- 12. models -----------------------------------------------------------------------------


async def test_picking_a_model_with_no_key_warns(fake: FakeProvider) -> None:
    app = make_app(fake, env={"OPENAI_API_KEY": "sk-test-0123456789"})
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        app.set_model("claude-haiku-4-5")
        await pilot.pause()
        assert any("No key for Anthropic" in n for n in notices(app)), notices(app)


async def test_the_picker_shows_a_local_model_as_local_not_key(fake: FakeProvider) -> None:
    from app.screens.model_picker import ModelPicker

    app = local_app(fake.base_url("local"))
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await pilot.press("ctrl+o")
        await until(lambda: isinstance(app.screen, ModelPicker), message="the model picker")
        (option,) = [
            o for o in app.screen.query_one("#models", OptionList).options if o.id == "smollm2"
        ]
        assert "local" in str(option.prompt) and "key ✓" not in str(option.prompt)


def test_an_unknown_app_model_falls_back_to_one_that_can_answer(fake: FakeProvider) -> None:
    app = local_app(fake.base_url("local"), model="gpt-9-ultra")
    assert app.model == "smollm2"
    app.session.release()


# --- 9. onboarding --------------------------------------------------------------------------


def status_text(screen: Widget, selector: str) -> str:
    return str(screen.query_one(selector, Static).content)


async def test_onboarding_tests_a_key_before_saving_it_and_picks_the_balanced_tier(
    fake: FakeProvider, memory_keyring: MemoryKeyring
) -> None:
    from textual.widgets import Input, Select

    from app.screens.onboarding import OnboardingScreen
    from tests.fakes.provider import http_error, text

    fake.default = http_error(401)

    app = make_app(fake, env={}, model="claude-sonnet-4-5")
    async with app.run_test(size=(100, 40)) as pilot:
        await until(lambda: isinstance(app.screen, OnboardingScreen), message="onboarding")
        screen = app.screen
        await until(lambda: isinstance(app.focused, Input), message="a focused field")
        assert app.focused is not None and app.focused.id == "key"  # no keystroke lost
        screen.query_one("#gateway", Select).value = "openai"
        await pilot.press(*"sk-bad-0123456789", "enter")
        await until(
            lambda: "not saved" in status_text(screen, "#onboarding-status"), message="the refusal"
        )
        assert memory_keyring.secrets == {}
        fake.default = text("ok")
        screen.query_one("#key", Input).value = "sk-good-0123456789"
        await pilot.press("enter")
        await until(lambda: app.screen is not screen, message="the key to be saved")
        assert memory_keyring.secrets == {("kept", "openai"): "sk-good-0123456789"}
        await until(
            lambda: app.catalog.get(app.model).tier == "balanced", message="a balanced model"
        )
        assert app.catalog.get(app.model).gateway == "openai"


# --- 10. /keys ------------------------------------------------------------------------------


async def test_keys_opens_on_the_gateway_list_tests_cheaply_and_confirms_delete(
    fake: FakeProvider, memory_keyring: MemoryKeyring
) -> None:
    from textual.widgets import OptionList

    from app.screens.keys import KeysScreen
    from tests.fakes.provider import http_error

    memory_keyring.secrets[("kept", "openai")] = "sk-old-0123456789"

    app = make_app(fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/keys", "enter")
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys")
        screen = app.screen
        assert isinstance(screen, KeysScreen)
        assert isinstance(app.focused, OptionList)
        names = [g.name for g in screen.gateways]
        await pilot.press("down")
        assert screen.selected.name == names[1]
        for _ in names:  # bounded: a missing gateway fails instead of hanging
            if screen.selected.name == "openai":
                break
            await pilot.press("down")
        assert screen.selected.name == "openai"
        fake.default = http_error(401)
        await pilot.click("#test")
        await until(
            lambda: "did not answer" in status_text(screen, "#key-status"), message="the test"
        )
        said = status_text(screen, "#key-status")
        assert "check it with /keys" not in said
        model = fake.requests[-1].body["model"]

        def price(entry: ModelEntry) -> float:
            pricing = app.catalog.pricing(entry)
            assert pricing is not None
            return pricing.input_per_token + pricing.output_per_token

        openai = (e for e in app.catalog.entries if e.gateway == "openai")
        assert model != "o3" and model == min(openai, key=price).id
        screen.query_one("#delete", Button).press()
        await pilot.pause()
        assert ("kept", "openai") in memory_keyring.secrets
        assert "again" in status_text(screen, "#key-status")
        screen.query_one("#delete", Button).press()
        await until(
            lambda: ("kept", "openai") not in memory_keyring.secrets, message="the deletion"
        )


async def test_keys_offers_no_save_without_a_keyring(fake: FakeProvider) -> None:
    from app.screens.keys import KeysScreen

    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/keys", "enter")
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys")
        assert not app.screen.query("#save")


# --- 11. the first reply is not slower than the rest ----------------------------------------

WARM_CHILD = """
import asyncio, sys
from tests.support import make_app
async def main():
    app = make_app(None, env={"OPENAI_API_KEY": "sk-test-0123456789"})
    async with app.run_test() as pilot:
        while app.ready_at is None:
            await pilot.pause()
        for worker in list(app.workers):
            if worker.group == "warm-up":
                await worker.wait()
        print("litellm" in sys.modules)
asyncio.run(main())
"""

CONSOLIDATE_CHILD = """
import sys
from app.cli.main import main
from memory import MemoryStore
from tests.support import pending_session
pending_session(MemoryStore().ensure())
main(["consolidate"])
print("litellm" in sys.modules)
"""


def child(code: str, tmp_path: Path) -> str:
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.support import subprocess_env

    env = subprocess_env(
        KEPT_DATA_DIR=os.environ["KEPT_DATA_DIR"],
        KEPT_CONFIG_DIR=os.environ["KEPT_CONFIG_DIR"],
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_litellm_is_loaded_in_the_background_once_the_first_screen_is_up(tmp_path: Path) -> None:
    assert child(WARM_CHILD, tmp_path) == "True"


def test_consolidate_with_nothing_to_send_does_not_load_litellm(tmp_path: Path) -> None:
    assert child(CONSOLIDATE_CHILD, tmp_path) == "False"


# --- 14. /memory ----------------------------------------------------------------------------


async def test_memory_tabs_by_number_history_by_date_and_angle_brackets_shown(
    fake: FakeProvider,
) -> None:
    from textual.widgets import Markdown, TabbedContent

    from app.screens.memory import MemoryScreen, shown
    from memory import MemoryStore

    store = MemoryStore().ensure()
    store.append_history("[2026-11-30 09:00] First of the day.")
    store.append_history("[2026-11-20 08:00] Imported: about the <transcript> tag.")
    store.append_history("[2026-11-30 18:00] Last of the day.")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/memory", "enter")
        await until(lambda: isinstance(app.screen, MemoryScreen), message="/memory")
        tabs = app.screen.query_one(TabbedContent)
        await pilot.press("2")
        assert tabs.active == "instructions-tab"
        await pilot.press("3")
        assert tabs.active == "history-tab"
        await pilot.press("4")
        assert tabs.active == "versions-tab"
        await pilot.press("1")
        assert tabs.active == "memory-tab"
        source = app.screen.query_one("#history-view", Markdown).source
        days = [line[1:11] for line in source.split("\n\n")]
        assert days == ["2026-11-30", "2026-11-30", "2026-11-20"], source
        assert "\\<transcript>" in source
    assert shown("a <b> `<c>`\n```\n<d>\n```") == "a \\<b> `<c>`\n```\n<d>\n```"


# --- 3. /keys fits ----------------------------------------------------------------------------


async def test_keys_result_and_buttons_are_in_sight_at_60x20(fake: FakeProvider) -> None:
    from textual.containers import VerticalScroll
    from textual.widgets import Button

    from app.screens.keys import KeysScreen

    app = make_app(fake)
    async with app.run_test(size=(60, 20)) as pilot:
        await composer_ready(pilot)
        await pilot.press(*"/keys", "enter")
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys")
        screen = app.screen
        dialog = screen.query_one(VerticalScroll)
        for _ in range(50):  # bounded: a Test button out of the Tab order fails, not hangs
            if isinstance(app.focused, Button) and app.focused.id == "test":
                break
            await pilot.press("tab")
        assert isinstance(app.focused, Button) and app.focused.id == "test"
        await pilot.pause()
        assert dialog.region.contains_region(app.focused.region), "Tab left Test unseen"
        await pilot.press("enter")
        await until(lambda: "works" in status_text(screen, "#key-status"), message="test")
        await pilot.pause()
        status = screen.query_one("#key-status")
        assert dialog.region.contains_region(status.region), "the result is off-screen"
