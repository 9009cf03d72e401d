"""One key form for /keys and onboarding: the same field, the same checks, the same words."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from app.screens.keys import KeysScreen
from app.screens.onboarding import OnboardingScreen
from app.widgets.key_form import KeyForm
from tests.fakes.keyring_backend import MemoryKeyring
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, until


def status(screen: object, selector: str) -> str:
    from textual.widgets import Static

    assert isinstance(screen, KeysScreen | OnboardingScreen)
    return str(screen.query_one(selector, Static).content)


@pytest.mark.asyncio
async def test_keys_and_onboarding_share_one_key_form(
    fake: FakeProvider, memory_keyring: MemoryKeyring
) -> None:
    """An empty Enter reads the same on both; a key pasted with spaces around it is kept
    without them on both (/keys used to refuse it, onboarding to trim it)."""
    fake.default = text("ok")
    app = make_app(fake, env={}, model="claude-sonnet-4-5")
    async with app.run_test(size=(100, 40)) as pilot:
        await until(lambda: isinstance(app.screen, OnboardingScreen), message="onboarding")
        onboarding = app.screen
        await until(lambda: isinstance(app.focused, KeyForm), message="the key field focused")
        await pilot.press("enter")
        await until(
            lambda: "Paste the Groq key first." in status(onboarding, "#onboarding-status"),
            message="onboarding's sentence",
        )
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, OnboardingScreen), message="chat")

        await app.push_screen(KeysScreen())
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys")
        keys = app.screen
        assert isinstance(keys, KeysScreen)
        field = keys.query_one("#key", Input)
        assert isinstance(field, KeyForm)
        groq = [g.name for g in keys.gateways].index("groq")
        keys.query_one("#gateways").highlighted = groq  # type: ignore[attr-defined]
        field.focus()
        await pilot.press("enter")
        await until(
            lambda: "Paste the Groq key first." in status(keys, "#key-status"),
            message="/keys' sentence",
        )
        field.value = "  gsk-pasted-0123456789 "
        await pilot.press("enter")
        await until(
            lambda: "Saved the Groq key" in status(keys, "#key-status"), message="the key saved"
        )
        assert memory_keyring.secrets == {("kept", "groq"): "gsk-pasted-0123456789"}
        assert field.value == ""
