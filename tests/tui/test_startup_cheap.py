"""What start-up does before the first frame is small: no key is read from the keyring
(a slow Secret Service must not delay it) and no config validator is built when there is
no config to check."""

from __future__ import annotations

import threading

import keyring
import pytest

from catalog import KeyStore
from catalog.gateways import GATEWAYS
from tests.fakes.keyring_backend import MemoryKeyring
from tests.support import settle


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


def test_a_deferred_store_reads_its_keys_when_told(counting_keyring: CountingKeyring) -> None:
    counting_keyring.set_password("kept", "groq", "gsk-in-the-keyring")
    keys = KeyStore(environ={}, defer=True)
    keys.load(GATEWAYS.values())
    assert counting_keyring.reads == []
    keys.read_deferred()
    assert {name for name, _ in counting_keyring.reads} == {
        g.name for g in GATEWAYS.values() if g.needs_key
    }
    assert keys.known(GATEWAYS["groq"]).value == "gsk-in-the-keyring"


def test_a_deferred_key_needed_before_it_was_read_is_read_then(
    counting_keyring: CountingKeyring,
) -> None:
    counting_keyring.set_password("kept", "groq", "gsk-in-the-keyring")
    keys = KeyStore(environ={}, defer=True)
    keys.load(GATEWAYS.values())
    assert keys.known(GATEWAYS["groq"]).value == "gsk-in-the-keyring"  # never "not read"
    assert [name for name, _ in counting_keyring.reads] == ["groq"]


async def test_the_app_reads_no_key_before_its_first_frame_and_none_on_its_loop(
    counting_keyring: CountingKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.main import KeptApp

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    app = KeptApp()
    assert counting_keyring.reads == []

    async with app.run_test() as pilot:
        await settle(pilot)
    assert counting_keyring.reads, "the keys were never read"
    assert not any(on_loop for _, on_loop in counting_keyring.reads)


def test_no_config_builds_no_validator() -> None:
    import catalog.config
    from app.settings import load_settings

    catalog.config._ADAPTERS.clear()
    settings = load_settings()
    assert settings.problems == () and catalog.config._ADAPTERS == {}


def test_an_empty_table_is_its_defaults_and_a_required_key_is_still_named() -> None:
    from catalog.config import ModelTable, TransportTable, parse_table

    assert parse_table(TransportTable, {}, "[transport]") == (TransportTable(), [])
    table, problems = parse_table(ModelTable, {}, "[[models]]")
    assert table is None and problems
