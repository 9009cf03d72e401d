"""The local server in the app: onboarding asks the context window a server does not say,
opens at its title, and /keys changes the local server after onboarding, with the same
form (app.widgets.local_server). The catalog's side is in tests/e2e/test_local_first.py."""

from __future__ import annotations

from textual.widgets import Button

from app.settings import config_path
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, settle, until

# What llama-cpp-python's server lists for a model it was started without --model_alias.
PATH = "/home/ana/models/SmolLM2-135M-Instruct.Q4_1.gguf"
LABEL = "SmolLM2-135M-Instruct.Q4_1"


async def test_onboarding_asks_the_window_of_a_server_that_does_not_say_it(
    fake: FakeProvider,
) -> None:
    from textual.widgets import Input

    from app.screens.chat import ChatScreen
    from app.screens.onboarding import OnboardingScreen

    fake.served = [PATH]  # llama-cpp-python started without --model_alias
    fake.default = text("ok")

    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: isinstance(app.screen, OnboardingScreen), message="onboarding")
        await settle(pilot)
        screen = app.screen
        screen.query_one("#base-url", Input).value = fake.base_url("local")
        screen.query_one("#probe", Button).press()
        await until(lambda: screen.query_one("#context-window").display, message="the ask")
        field = screen.query_one("#context-window", Input)
        assert field.value == "2048"  # llama-cpp-python's default, never 8,192
        status = str(screen.query_one("#onboarding-status").render())
        assert "does not say its context window" in status
        # The list has the keys; Tab reaches the window, Enter takes the highlighted
        # model with the window the user started the server with.
        assert app.focused is screen.query_one("#server-models")
        # Shown, the field joins the focus chain once the screen has laid it out.
        await until(lambda: field in screen.focus_chain, message="the window field focusable")
        await pilot.press("tab")
        assert app.focused is field
        await pilot.press(*["backspace"] * 4, *"4096", "enter")
        await until(lambda: isinstance(app.screen, ChatScreen), message="the chat")
        assert app.model == PATH
        assert app.catalog.get(PATH).label == LABEL
        await settle(pilot)
    saved = config_path().read_text()
    assert f'id = "{PATH}"' in saved and "context_window = 4096" in saved
    assert "label" not in saved  # the label follows from the id
    (test,) = [r for r in fake.requests if r.gateway == "local"]
    assert test.model == PATH


async def test_a_wrong_window_is_named_and_nothing_is_sent(fake: FakeProvider) -> None:
    from textual.widgets import Input

    fake.served = [PATH]

    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app.screen.query("#base-url"), message="onboarding")
        await settle(pilot)
        screen = app.screen
        screen.query_one("#base-url", Input).value = fake.base_url("local")
        screen.query_one("#probe", Button).press()
        await until(lambda: screen.query_one("#context-window").display, message="the ask")
        screen.query_one("#context-window", Input).value = "12"
        screen.query_one("#server-models").focus()
        await pilot.press("enter")
        await pilot.pause()
        said = str(screen.query_one("#onboarding-status").render())
        assert said.startswith("The context window must be a whole number of tokens")
        assert app.focused is screen.query_one("#context-window")
    assert not [r for r in fake.requests if r.gateway == "local"]
    assert not config_path().exists()


async def test_onboarding_at_80x24_opens_at_its_title() -> None:
    from textual.containers import VerticalScroll
    from textual.widgets import Label

    from app.screens.onboarding import OnboardingScreen

    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: isinstance(app.screen, OnboardingScreen), message="onboarding")
        await settle(pilot)
        screen = app.screen
        body = screen.query_one(VerticalScroll)
        title = screen.query_one(Label)
        assert str(title.render()) == "Welcome to Kept"
        assert body.scroll_y == 0
        assert body.scrollable_content_region.contains_region(title.region)
        # The field that takes the first keystroke is in sight as well.
        assert app.focused is screen.query_one("#base-url")
        assert body.scrollable_content_region.contains_region(app.focused.region)


async def test_the_local_server_can_be_changed_in_keys(fake: FakeProvider) -> None:
    from textual.widgets import Collapsible, Input

    from app.screens.keys import KeysScreen

    fake.served = [PATH]
    fake.default = text("ok")

    app = make_app(fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.action_keys()
        await until(
            lambda: isinstance(app.screen, KeysScreen) and app.screen.query("#base-url"),
            message="/keys",
        )
        screen = app.screen
        screen.query_one("#local-server", Collapsible).collapsed = False
        address = screen.query_one("#base-url", Input)
        assert address.value == fake.base_url("local")  # where the gateway points now
        await settle(pilot)
        screen.query_one("#probe", Button).press()
        await until(lambda: screen.query_one("#context-window").display, message="the ask")
        screen.query_one("#context-window", Input).value = "3000"
        screen.query_one("#server-models").focus()
        await pilot.press("enter")
        await until(lambda: app.model == PATH, message="the new chat model")
        said = str(screen.query_one("#local-status").render())
        assert said == (
            f"Chatting with {LABEL} on {fake.base_url('local')}, in a 3,000-token window."
        )
        assert app.screen is screen  # /keys stays open
        # The same model again with another window: its entry is updated, not doubled.
        screen.query_one("#context-window", Input).value = "4096"
        screen.query_one("#use-local", Button).press()
        await until(
            lambda: "4,096-token" in str(screen.query_one("#local-status").render()),
            message="the second save",
        )
    saved = config_path().read_text()
    assert f'base_url = "{fake.base_url("local")}"' in saved
    assert saved.count(f'id = "{PATH}"') == 1
    assert "context_window = 4096" in saved and "context_window = 3000" not in saved
    assert 'model = "' + PATH + '"' in saved


def test_a_server_on_another_machine_is_said_to_receive_the_transcripts() -> None:
    from app.widgets.local_server import elsewhere

    assert "gpu-box.lan is not this machine" in elsewhere("http://gpu-box.lan:8000/v1")
    assert elsewhere("http://127.0.0.1:8000/v1") == ""
    assert elsewhere("http://localhost:11434") == ""
