"""The terminal app, driven by Textual's Pilot against the real fake provider."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual.widgets import Button, Input, Select

from app.screens.chat import PAGE, ChatScreen
from app.screens.help import HelpScreen
from app.screens.keys import KeysScreen
from app.screens.model_picker import ModelPicker
from app.screens.onboarding import OnboardingScreen
from app.settings import config_path
from app.widgets.composer import Composer
from app.widgets.message import MessageView
from app.widgets.status_bar import StatusBar
from memory import MemorySettings, MemoryStore
from tests.fakes.keyring_backend import MemoryKeyring
from tests.fakes.provider import FakeProvider, hang, http_error, text, tool_call
from tests.support import fake_keys, make_app, nothing_new, save_args, send, settle, until

if TYPE_CHECKING:
    from app.main import KeptApp


def views(app: KeptApp) -> list[MessageView]:
    return list(app.screen.query(MessageView))


async def test_a_reply_streams_in_and_is_kept_in_the_journal(fake: FakeProvider) -> None:
    fake.default = text("Hello **Ana**!\n\n```python\nprint('hi')\n```\n", chunks=10)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "Hi, I'm Ana")
        user, reply = views(app)[-2:]
        assert user.text == "Hi, I'm Ana" and user.has_class("user")
        assert reply.text == "Hello **Ana**!\n\n```python\nprint('hi')\n```\n"
        assert reply.who == "GPT-4.1 mini"
        bar = app.screen.query_one(StatusBar)
        assert bar.tokens > 0 and bar.cost > 0
        roles = [(m["role"], m.get("model")) for m in app.session.messages]
        assert roles == [("user", None), ("assistant", "gpt-4.1-mini")]
        # The model was sent the system prompt built from memory.
        sent = fake.requests[-1].body["messages"]
        assert sent[0]["role"] == "system" and "MEMORY.md" in sent[0]["content"]
        assert fake.requests[-1].stream


async def test_a_fallback_answer_says_which_model_answered(fake: FakeProvider) -> None:
    fake.set_default("gpt-4.1-mini", http_error(500))
    fake.default = text("From the backup.")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        reply = views(app)[-1]
        assert reply.text == "From the backup."
        assert reply.who.startswith(
            "GPT-4.1 mini is unavailable — answered by Claude Haiku 4.5 (server error"
        )
        assert app.session.messages[-1]["model"] == "claude-haiku-4-5"


async def test_a_dead_chat_model_is_not_waited_for_on_the_next_message(fake: FakeProvider) -> None:
    fake.set_default("gpt-4.1-mini", http_error(500))
    fake.default = text("From the backup.")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        assert fake.count(model="gpt-4.1-mini") == 2  # one short retry, then the chain
        await send(pilot, "and again")
        assert fake.count(model="gpt-4.1-mini") == 2  # cooling down: not asked
        reply = views(app)[-1]
        assert reply.text == "From the backup."
        assert reply.who.startswith(
            "GPT-4.1 mini is unavailable — answered by Claude Haiku 4.5 (cooling down until "
        )
        assert "after 2 × 500" in reply.who


async def test_when_no_model_answers_a_readable_notice_gives_the_next_step(
    fake: FakeProvider,
) -> None:
    fake.default = http_error(401)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        notice = views(app)[-1]
        assert notice.has_class("error")
        assert "No model could answer" in notice.text
        assert "key was refused" in notice.text and "/keys" in notice.text
        assert "Traceback" not in notice.text
        assert app.session.messages[-1] == {**app.session.messages[-1], "role": "user"}


async def test_escape_cancels_a_reply_without_falling_back(fake: FakeProvider) -> None:
    fake.set_default("gpt-4.1-mini", hang())

    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.press(*"hello", "enter")
        assert await asyncio.to_thread(fake.wait_for_requests, 1)
        await pilot.press("escape")
        await settle(pilot)
        assert views(app)[-1].text == "Reply cancelled."
        assert fake.count(model="claude-haiku-4-5") == 0


async def test_new_session_saves_memory_in_the_background(fake: FakeProvider) -> None:
    fake.default = text("Nice to meet you.")
    fake.set_default("llama-3.3-70b-versatile", tool_call("save_memory", save_args()))

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "I'm Ana")
        old = app.session.id
        await pilot.press(*"/new", "enter")
        assert app.session.id != old
        assert views(app)[-1].text == "New session started."
        await settle(pilot)
        status = app.screen.query_one(StatusBar).memory
        assert status.startswith("Memory saved (llama-3.3-70b-versatile, ")
        store = app.store
        assert store.memory_path.read_text() == "# About the user\n- Name: Ana\n"
        assert store.history_entries()[0].body.endswith("The user introduced themselves.")


async def test_memory_not_saved_yet_is_shown_and_the_session_stays_pending(
    fake: FakeProvider,
) -> None:
    fake.default = text("ok")
    for model in (
        "llama-3.3-70b-versatile",
        "qwen/qwen3-32b",
        "meta-llama/llama-4-scout-17b-16e-instruct",
        "claude-haiku-4-5",
    ):
        fake.set_default(model, http_error(503))

    app = make_app(fake, model="gpt-5")
    async with app.run_test() as pilot:
        await send(pilot, "remember this")
        fake.set_default("gpt-4.1-mini", http_error(503))
        await pilot.press("ctrl+n")
        await settle(pilot)
        status = app.screen.query_one(StatusBar).memory
        assert status == "Memory not saved yet — will retry (1 pending)"
        (pending,) = app.store.pending_sessions()
        assert pending.messages[0]["content"] == "remember this"


async def test_quitting_while_memory_is_being_saved_leaves_the_session_pending(
    fake: FakeProvider,
) -> None:
    fake.default = text("ok")
    fake.set_default("llama-3.3-70b-versatile", hang())

    async def scenario() -> MemoryStore:
        app = make_app(fake)
        async with app.run_test() as pilot:
            await send(pilot, "remember this")
            await pilot.press("ctrl+n")
            assert await asyncio.to_thread(fake.wait_for_requests, 2)
            assert app.screen.query_one(StatusBar).memory == "Saving memory…"
        return app.store

    store = await scenario()
    (pending,) = MemoryStore().pending_sessions()
    assert pending.messages[0]["content"] == "remember this"
    assert not store.memory_path.exists()


async def test_model_picker_lists_the_visible_models_and_persists_the_choice(
    fake: FakeProvider,
) -> None:
    chosen: list[str] = []

    app = make_app(fake, model="gpt-4.1-mini")
    async with app.run_test() as pilot:
        await pilot.press(*"/model", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ModelPicker)
        from textual.widgets import OptionList

        options = app.screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids == [e.id for e in app.catalog.visible()]
        assert "llama-3.3-70b-versatile" not in ids and "qwen3-32b" not in ids
        highlighted = options.highlighted
        assert highlighted is not None and ids[highlighted] == "gpt-4.1-mini"
        below_id = ids[highlighted + 1]
        assert below_id is not None
        below = app.catalog.get(below_id)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        assert app.model == below.id
        assert app.screen.query_one(StatusBar).model_label == below.label
        chosen.append(below.id)
    assert f'model = "{chosen[0]}"' in config_path().read_text()


async def test_keys_screen_sets_and_deletes_a_key_in_the_keyring(
    fake: FakeProvider, memory_keyring: MemoryKeyring
) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.press(*"/keys", "enter")
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys to open")
        await pilot.press("enter")  # Anthropic is highlighted first: to its key field
        await pilot.press(*"sk ant", "enter")
        status = str(app.screen.query_one("#key-status").render())
        assert "contains whitespace" in status
        app.screen.query_one("#key", Input).value = ""
        await pilot.press(*"sk-ant-123", "enter")  # tested against the fake, then saved
        saved = {("kept", "anthropic"): "sk-ant-123"}
        await until(lambda: memory_keyring.secrets == saved, message="the key saved")
        app.screen.query_one("#delete", Button).press()  # Delete asks first
        await pilot.pause()
        assert memory_keyring.secrets
        app.screen.query_one("#delete", Button).press()
        await until(lambda: not memory_keyring.secrets, message="the key deleted")
        await pilot.pause()
        assert "Deleted the Anthropic key" in str(app.screen.query_one("#key-status").render())
        await pilot.press("escape")
        assert isinstance(app.screen, ChatScreen)


async def test_keys_screen_tests_a_gateway(fake: FakeProvider) -> None:
    fake.default = text("ok")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.press(*"/keys", "enter")
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys to open")
        await pilot.click("#test")
        await settle(pilot)
        assert "Anthropic works" in str(app.screen.query_one("#key-status").render())
        assert fake.requests[-1].gateway == "anthropic"
        assert fake.requests[-1].body["max_tokens"] == 5


async def test_theme_choice_persists(fake: FakeProvider) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        assert app.theme == "kept-dark"
        assert {"kept-dark", "kept-light", "kept-high-contrast", "kept-ember"} <= set(
            app.available_themes
        )
        await pilot.press(*"/theme", "enter")
        await pilot.pause()
        await pilot.press(*"kept-light")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "kept-light"
    assert 'theme = "kept-light"' in config_path().read_text()


async def test_help_export_copy_and_unknown_commands(fake: FakeProvider, tmp_path: Path) -> None:
    fake.default = text("Use this:\n\n```sh\nls -la\n```\n")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await send(pilot, "how do I list files?")
        await pilot.press(*f"/export {tmp_path}", "enter")
        await pilot.pause()
        exported = tmp_path / f"kept-{app.session.id}.md"
        assert "## You" in exported.read_text()
        assert "ls -la" in exported.read_text()
        await pilot.press(*"/copy code", "enter")
        await pilot.pause()
        assert app.clipboard == "ls -la\n"
        await pilot.press(*"/modle", "enter")
        await pilot.pause()
        assert "Unknown command `/modle`. Did you mean /model?" in views(app)[-1].text


async def test_composer_recalls_prompts_and_completes_commands(fake: FakeProvider) -> None:
    fake.default = text("ok")

    app = make_app(fake)
    async with app.run_test() as pilot:
        composer = app.screen.query_one(Composer)
        await send(pilot, "first question")
        await pilot.press("up")
        assert composer.text == "first question"
        await pilot.press("down")
        assert composer.text == ""
        await pilot.press(*"/mo")
        assert app.screen.query_one("#suggestions").has_class("visible")
        await pilot.press("tab")
        assert composer.text == "/model "
        composer.clear()
        await pilot.press(*"line one", "shift+enter", *"line two")
        assert composer.text == "line one\nline two"


async def test_the_assistant_searches_history_on_its_own(fake: FakeProvider) -> None:
    fake.script(
        "gpt-4.1-mini",
        tool_call("search_history", {"pattern": "tea"}),
        text("You told me you like green tea."),
    )

    app = make_app(fake)
    app.store.ensure()
    app.store.append_history("[2026-11-01 09:00] Ana said she likes green tea.")
    async with app.run_test() as pilot:
        await send(pilot, "what do I drink?")
        reply = views(app)[-1]
        assert reply.text == "You told me you like green tea."
        assert "searched history: 'tea'" in reply.who
        tool_result = fake.requests[-1].body["messages"][-1]
        assert tool_result["role"] == "tool"
        assert "Ana said she likes green tea." in tool_result["content"]
        roles = [m["role"] for m in app.session.messages]
        assert roles == ["user", "assistant", "tool", "assistant"]


async def test_a_2000_message_session_opens_on_its_newest_page(fake: FakeProvider) -> None:
    store = MemoryStore().ensure()
    journal = store.new_session("gpt-4.1-mini")
    for i in range(2000):
        journal.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"msg {i}",
                "model": "gpt-4.1-mini",
            }
        )

    app = make_app(fake, memory_settings=MemorySettings(session_max_messages=5000))
    async with app.run_test() as pilot:
        await settle(pilot)  # the session is found after the first frame
        shown = views(app)
        assert len(shown) == PAGE
        assert shown[-1].text == "msg 1999"
        app.screen.query_one("#earlier", Button).press()
        await pilot.pause()
        assert len(views(app)) == 2 * PAGE
        assert views(app)[0].text == f"msg {2000 - 2 * PAGE}"


async def test_a_long_live_session_is_compacted_in_the_background(fake: FakeProvider) -> None:
    fake.default = text("ok")
    fake.set_default("llama-3.3-70b-versatile", tool_call("save_memory", nothing_new()))
    settings = replace(MemorySettings(), session_max_messages=6, session_keep_messages=2)

    app = make_app(fake, memory_settings=settings)
    async with app.run_test() as pilot:
        for i in range(4):
            await send(pilot, f"question {i}")
        await settle(pilot)
        assert app.session.journal.consolidated  # the older part was saved...
        assert len(app.session.messages) == 8  # ...and the journal still has it all
        assert len(app.session.context()) < 8
        assert app.store.history_entries()


async def test_onboarding_stores_a_key(fake: FakeProvider, memory_keyring: MemoryKeyring) -> None:
    app = make_app(fake, env={}, model="claude-sonnet-4-5")
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, OnboardingScreen)
        app.screen.query_one("#gateway", Select).value = "openai"
        app.screen.query_one("#key").focus()
        await pilot.press(*"sk-openai-1", "enter")  # tested against the fake first
        await until(lambda: isinstance(app.screen, ChatScreen), message="the chat")
        assert memory_keyring.secrets == {("kept", "openai"): "sk-openai-1"}
        assert app.catalog.get(app.model).gateway == "openai"


async def test_onboarding_without_a_keyring_explains_env_vars_and_sets_up_a_local_server(
    fake: FakeProvider,
) -> None:
    fake.served, fake.n_ctx = ["llama3.2", "qwen2.5"], 4096
    fake.default = text("ok")

    app = make_app(None)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, OnboardingScreen)
        explanation = str(app.screen.query_one("#no-keyring").render())
        assert "No OS keyring is available" in explanation
        assert "export GROQ_API_KEY=..." in explanation
        # The address field has focus: the first keystroke is not lost.
        assert app.focused is app.screen.query_one("#base-url")
        await pilot.press(*["backspace"] * 40, *fake.base_url("local"), "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("down", "enter")  # the second model the server lists
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        assert app.model == "qwen2.5"
    text_ = config_path().read_text()
    assert f'base_url = "{fake.base_url("local")}"' in text_ and 'id = "qwen2.5"' in text_
    assert "context_window = 4096" in text_  # what the server reports it was started with
    (test,) = [r for r in fake.requests if r.gateway == "local"]
    assert test.model == "qwen2.5" and test.body["max_tokens"] == 8


async def test_onboarding_names_a_local_address_where_nothing_listens() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    app = make_app(None)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.screen.query_one("#base-url", Input).value = f"http://127.0.0.1:{port}/v1"
        app.screen.query_one("#local-model", Input).value = "llama3.2"
        app.screen.query_one("#use-local", Button).press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, OnboardingScreen)  # nothing accepted silently
        said = str(app.screen.query_one("#onboarding-status").render())
        assert said == (
            f"Nothing is listening at http://127.0.0.1:{port}/v1/models "
            "(connection refused). Start your server, or fix the address."
        )
    assert not config_path().exists()


async def test_onboarding_does_not_save_a_model_that_does_not_answer(fake: FakeProvider) -> None:
    fake.served = ["llama3.2"]
    fake.set_default("llama3.2", http_error(404, message="model 'llama3.2' not found"))

    app = make_app(None)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.screen.query_one("#base-url", Input).value = fake.base_url("local")
        app.screen.query_one("#local-model").focus()
        await pilot.press(*"llama3.2", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, OnboardingScreen)
        said = str(app.screen.query_one("#onboarding-status").render())
        assert said.startswith("llama3.2 did not answer a test message (not found")
        assert said.endswith("nothing was saved.")
    assert not config_path().exists()


async def test_bad_settings_are_named_and_the_app_still_starts(fake: FakeProvider) -> None:
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text('[app]\nmodel = "gpt-9"\ncolour = "red"\n\n[memory]\nattempt_deadline = "x"\n')

    from app.main import KeptApp
    from tests.support import fake_catalog

    app = KeptApp(catalog=fake_catalog(fake), config_path=path)
    async with app.run_test() as pilot:
        await pilot.pause()
        messages = app.notices
        assert any("[app] has an unknown key 'colour'" in m for m in messages)
        assert any("[app] model 'gpt-9' is not a model Kept knows" in m for m in messages)
        assert any("[memory] attempt_deadline must be a number" in m for m in messages)
        assert isinstance(app.screen, ChatScreen)
        assert app.model == "claude-sonnet-4-5"


async def test_settings_writes_keep_the_users_comments(fake: FakeProvider) -> None:
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text('# my settings\n[app]\ntheme = "kept-dark"  # dark is best\n')

    app = make_app(fake)
    async with app.run_test() as pilot:
        app.set_model("gpt-5")
        await pilot.pause()
    assert path.read_text() == (
        '# my settings\n[app]\ntheme = "kept-dark"  # dark is best\nmodel = "gpt-5"\n'
    )


def test_the_first_screen_is_drawn_without_importing_litellm(tmp_path: Path) -> None:
    # litellm is loaded in the background right after the first frame: what counts is
    # when its import began, against the moment the first screen was ready.
    code = """
import asyncio, sys, time
began = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm" and not began:
            began.append(time.perf_counter())
        return None
sys.meta_path.insert(0, Watch())
from app.main import KeptApp
async def main():
    app = KeptApp()
    async with app.run_test() as pilot:
        while app.ready_at is None:
            await pilot.pause()
        print(bool(began and began[0] < app.ready_at), type(app.screen).__name__)
asyncio.run(main())
"""
    env = {
        "KEPT_DATA_DIR": str(tmp_path / "d"),
        "KEPT_CONFIG_DIR": str(tmp_path / "c"),
        "KEPT_DEVICE": os.environ["KEPT_DEVICE"],
        "OPENAI_API_KEY": "sk-test",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        env=env,
        timeout=120,
    )
    assert out.stdout.split() == ["False", "ChatScreen"], out.stderr[-2000:]


async def test_key_material_is_never_written_under_the_data_or_config_dirs(
    fake: FakeProvider, tmp_path: Path
) -> None:
    fake.default = text("ok")
    fake.set_default(
        "llama-3.3-70b-versatile",
        http_error(401, message=("Incorrect API key provided: " + fake_keys()["GROQ_API_KEY"])),
    )

    app = make_app(fake)
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        await pilot.press("ctrl+n")
        await settle(pilot)
    secrets = list(fake_keys().values())
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(s.encode() in data for s in secrets), path
    assert json.loads(MemoryStore().log_path.read_text().splitlines()[0])["model"]
