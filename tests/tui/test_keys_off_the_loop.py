"""Keys are read from the keyring where a caller says so, never behind a route or on the
app's event loop: a locked keyring or a slow secret service must not freeze a screen."""

from __future__ import annotations

import threading

import keyring
import pytest
from textual.widgets import OptionList

from app.screens.keys import KeysScreen
from catalog import Catalog, KeyStore
from catalog.config import CatalogConfig
from catalog.gateways import GATEWAYS
from tests.fakes.keyring_backend import MemoryKeyring
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, until


class CountingKeyring(MemoryKeyring):
    """The in-memory keyring, noting which thread asked for each key."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, bool]] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.reads.append((username, threading.current_thread() is threading.main_thread()))
        return super().get_password(service, username)


@pytest.fixture
def counting_keyring() -> CountingKeyring:
    backend = CountingKeyring()
    keyring.set_keyring(backend)
    return backend


def test_a_route_reads_no_key(counting_keyring: CountingKeyring) -> None:
    counting_keyring.set_password("kept", "groq", "gsk-in-the-keyring")
    catalog = Catalog(config=CatalogConfig(), keys=KeyStore(environ={}))
    read = len(counting_keyring.reads)
    routes = [catalog.route(entry) for entry in catalog.entries]
    assert len(counting_keyring.reads) == read, "a route read the keyring"
    assert read > 0  # every key was read once, when the catalog was built
    groq = next(r for r in routes if r.gateway.name == "groq")
    assert groq.key.value == "gsk-in-the-keyring" and groq.key.source == "keyring"


def test_a_saved_or_deleted_key_is_known_without_reading_the_keyring(
    counting_keyring: CountingKeyring,
) -> None:
    keys = KeyStore(environ={"OPENAI_API_KEY": "sk-from-the-environment"})
    catalog = Catalog(config=CatalogConfig(), keys=keys)
    openai = catalog.gateways["openai"]
    keys.set(openai, "sk-in-the-keyring")
    read = len(counting_keyring.reads)
    assert catalog.route(catalog.get("gpt-4.1-mini")).key.value == "sk-in-the-keyring"
    assert keys.delete(openai)
    assert keys.known(openai).value == "sk-from-the-environment"
    assert keys.known(openai).source == "env"
    assert len(counting_keyring.reads) == read


def test_refresh_reads_a_key_changed_outside_kept(counting_keyring: CountingKeyring) -> None:
    keys = KeyStore(environ={})
    keys.load([GATEWAYS["groq"]])
    assert not keys.known(GATEWAYS["groq"]).usable
    counting_keyring.set_password("kept", "groq", "gsk-set-elsewhere")
    assert not keys.known(GATEWAYS["groq"]).usable  # known: what was read, nothing more
    keys.refresh([GATEWAYS["groq"]])
    assert keys.known(GATEWAYS["groq"]).value == "gsk-set-elsewhere"


async def test_saving_a_key_in_keys_reads_no_key_on_the_event_loop(
    fake: FakeProvider, counting_keyring: CountingKeyring
) -> None:
    fake.default = text("ok")

    app = make_app(fake)
    async with app.run_test() as pilot:
        await pilot.press(*"/keys", "enter")
        await until(lambda: isinstance(app.screen, KeysScreen), message="/keys opened")
        counting_keyring.reads.clear()
        await pilot.press("enter")  # Anthropic is highlighted first: to its key field
        await pilot.press(*"sk-ant-123", "enter")  # tested against the fake, then saved
        await until(
            lambda: "Saved the Anthropic key" in str(app.screen.query_one("#key-status").render()),
            message="the key saved",
        )
        assert counting_keyring.secrets == {("kept", "anthropic"): "sk-ant-123"}
        on_the_loop = [gateway for gateway, main in counting_keyring.reads if main]
        assert on_the_loop == [], f"read on the event loop: {on_the_loop}"
        option = app.screen.query_one("#gateways", OptionList).get_option("anthropic")
        assert "key from keyring" in str(option.prompt)
