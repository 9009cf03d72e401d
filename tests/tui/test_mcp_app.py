"""The chat with a tool server, through Textual's pilot: the consent prompt answered y, a
or n; "always" kept in config.toml; the call drawn in the conversation; /tools turning a
server on and keeping it."""

from __future__ import annotations

import sys
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from app.main import KeptApp
from app.mcp_settings import mcp_settings
from app.settings import config_path
from memory.chat.turn import DECLINED
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import make_app, until

SERVER = Path(__file__).parents[1] / "mcp_tool_server.py"
MODEL = "gpt-4.1-mini"


def app_with_server(fake: FakeProvider, *, enabled: bool = True) -> KeptApp:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# my tools\n[mcp.servers.web]\n"
        f'command = "{sys.executable}"\nargs = ["{SERVER}"]\nenabled = {str(enabled).lower()}\n'
    )
    app = make_app(fake)
    app.settings = replace(app.settings, mcp=mcp_settings(path))
    return app


async def ask(pilot: Pilot[Any], words: str) -> None:
    from app.widgets.composer import Composer

    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer")
    composer = pilot.app.focused
    assert isinstance(composer, Composer)
    composer.insert(words)
    await pilot.press("enter")


async def consent(pilot: Pilot[Any], key: str) -> None:
    from app.screens.consent import ConsentDialog

    await until(
        lambda: isinstance(pilot.app.screen, ConsentDialog), message="the prompt", deadline=120
    )
    await pilot.press(key)
    await until(lambda: not isinstance(pilot.app.screen, ConsentDialog), message="it closed")


async def finished(pilot: Pilot[Any]) -> None:
    from app.screens.chat import ChatScreen

    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await screen.reply_finished()
    await pilot.pause()


def tool_results(fake: FakeProvider) -> list[str]:
    return [m["content"] for m in fake.requests[-1].body["messages"] if m.get("role") == "tool"]


async def test_yes_once_runs_the_tool_and_shows_the_call(fake: FakeProvider) -> None:
    from app.widgets.tool_call import ToolCallView

    fake.script(MODEL, tool_call("web__weather", {"city": "Lisbon"}), text("Sunny, it says."))

    app = app_with_server(fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask(pilot, "Weather in Lisbon?")
        await consent(pilot, "y")
        await finished(pilot)
        (view,) = pilot.app.screen.query(ToolCallView)
        assert view.collapsed and "web · weather — ran" in str(view.title)
        assert tool_results(fake) == ["Sunny and 21 degrees in Lisbon."]


async def test_always_is_kept_in_config_and_not_asked_again(fake: FakeProvider) -> None:
    from app.screens.consent import ConsentDialog

    fake.script(
        MODEL,
        tool_call("web__echo", {"text": "one"}),
        tool_call("web__echo", {"text": "two"}),
        text("Echoed twice."),
    )

    app = app_with_server(fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask(pilot, "Echo twice")
        await consent(pilot, "a")

        def asked() -> bool:
            return isinstance(app.screen, ConsentDialog)

        await until(lambda: asked() or fake.count(MODEL) == 3, message="the third request")
        assert not asked()
        await finished(pilot)
    assert tool_results(fake) == ["echo: one", "echo: two"]
    written = config_path().read_text()
    assert written.startswith("# my tools")
    assert tomllib.loads(written)["mcp"]["servers"]["web"]["allowed_tools"] == ["echo"]


async def test_no_declines_and_the_model_hears_it(fake: FakeProvider) -> None:
    fake.script(MODEL, tool_call("web__echo", {"text": "x"}), text("Alright, I won't."))

    app = app_with_server(fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask(pilot, "Echo?")
        await consent(pilot, "n")
        await finished(pilot)
    assert tool_results(fake) == [DECLINED]


async def test_tools_screen_turns_a_server_on_and_keeps_it(fake: FakeProvider) -> None:
    from app.screens.tools import ToolsScreen

    app = app_with_server(fake, enabled=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask(pilot, "/tools")
        await until(lambda: isinstance(app.screen, ToolsScreen), message="/tools")
        screen = app.screen
        assert isinstance(screen, ToolsScreen)
        server = screen.toolbox.servers["web"]
        await pilot.press("space")
        await until(lambda: len(server.tools) == 9, message="the server's tools", deadline=120)
        await pilot.app.workers.wait_for_complete()
        await pilot.press("escape")
        await screen.toolbox.close()
    data = tomllib.loads(config_path().read_text())
    assert data["mcp"]["servers"]["web"]["enabled"] is True


async def test_a_server_s_own_words_are_shown_as_written_not_read_as_markup(
    fake: FakeProvider,
) -> None:
    """A server that fails says why on its stderr, in words Kept does not write: brackets
    in them ("usage: srv [/path]") are shown as they are, not taken for Textual markup."""
    from textual.widgets import OptionList

    from app.screens.tools import ToolsScreen

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fails = "import sys; print('usage: srv [/path]', file=sys.stderr); sys.exit(2)"
    path.write_text(f'[mcp.servers.web]\ncommand = "{sys.executable}"\nargs = ["-c", "{fails}"]\n')

    async def go() -> str:
        app = make_app(fake)
        app.settings = replace(app.settings, mcp=mcp_settings(path))
        async with app.run_test(size=(100, 30)) as pilot:
            await ask(pilot, "/tools")
            await until(lambda: isinstance(app.screen, ToolsScreen), message="/tools")
            screen = app.screen
            assert isinstance(screen, ToolsScreen)
            await pilot.press("space")
            server = screen.toolbox.servers["web"]
            await until(lambda: bool(server.reason), message="the server's failure", deadline=120)
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            options = screen.query_one(OptionList)
            shown = str(options.get_option_at_index(0).prompt)
            await pilot.press("escape")
            await screen.toolbox.close()
            return shown

    assert "usage: srv [/path]" in await go()
