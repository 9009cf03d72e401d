"""Every test runs against temporary folders, no real keys and no real keyring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest

from tests.fakes.keyring_backend import MemoryKeyring
from tests.fakes.provider import FakeProvider
from tests.support import PROVIDER_ENV


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Temporary data and config dirs; provider keys come only from what a test sets."""
    monkeypatch.setenv("KEPT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KEPT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KEPT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("KEPT_DEVICE", "this-machine")
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):  # /copy must never reach a real clipboard
        monkeypatch.delenv(name, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # type: ignore[no-untyped-call]
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def memory_keyring() -> MemoryKeyring:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    return backend


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider
