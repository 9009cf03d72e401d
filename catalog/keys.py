"""API keys: the OS keyring first (service "kept", user = gateway name), then env vars.

Reading the keyring may block (a locked keyring asks to be unlocked, a secret service
answers over D-Bus), so it happens only where a caller says so: `load` and `refresh` read,
in a worker or before the app runs; `known` and everything built on it (a catalog's
routes, redaction) use what was read. Saving or deleting a key updates what is known
without reading the keyring again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from catalog.gateways import Gateway

log = logging.getLogger(__name__)

KEYRING_SERVICE = "kept"


class KeyStoreError(ValueError):
    """A key that cannot be stored, with the sentence that says why."""


@dataclass(frozen=True)
class KeyLookup:
    """What was found for one gateway: a usable key, or why there is none."""

    gateway: str
    value: str | None = field(repr=False)  # never in a traceback or a log line
    source: str | None  # "keyring", "env", "not needed", or None
    problem: str | None = None
    missing: bool = False  # no key at all, in the keyring or the environment: the app words
    # the next step (app.words.models.missing_key); `problem` says only the fact

    @property
    def usable(self) -> bool:
        return self.value is not None


def key_problem(value: str, where: str) -> str | None:
    """A sentence naming what is wrong with a key, or None when it looks usable."""
    if not value.strip():
        return f"{where} is empty; set the key again."
    if value != value.strip():
        return f"{where} has spaces or a line break around it; set the key alone."
    if any(ch.isspace() for ch in value):
        return f"{where} contains whitespace; set the key alone, with nothing around it."
    return None


class KeyStore:
    """Reads and writes gateway keys; says once, clearly, when no OS keyring exists."""

    def __init__(self, environ: Mapping[str, str] | None = None, *, defer: bool = False) -> None:
        self._environ = environ if environ is not None else os.environ
        self._cache: dict[str, KeyLookup] = {}
        self.keyring_problem: str | None = None
        self._said = False
        self._seen: set[str] = set()  # every key value read, usable or not: for redaction
        # With `defer`, `load` only notes the gateways; `read_deferred` reads their keys.
        self._defer = defer
        self._later: dict[str, Gateway] = {}
        self._reading = threading.Lock()  # one read of the keyring at a time

    def forget(self) -> None:
        self._cache.clear()

    def load(self, gateways: Iterable[Gateway]) -> None:
        """Read the key of every gateway not read yet. Blocks: off the event loop. A store
        made with `defer` (the app's: a slow keyring must not delay its first screen) only
        notes them, for `read_deferred`."""
        if self._defer:
            self._later.update((gateway.name, gateway) for gateway in gateways)
            return
        for gateway in gateways:
            self.lookup(gateway)

    def read_deferred(self) -> None:
        """Read the keys `load` put off, and read any later ones at once. Blocks: in a
        thread."""
        self._defer = False
        for gateway in list(self._later.values()):
            self.lookup(gateway)
        self._later.clear()

    def refresh(self, gateways: Iterable[Gateway]) -> None:
        """Read these gateways' keys again (changed outside Kept). Blocks: off the loop."""
        for gateway in gateways:
            self._cache.pop(gateway.name, None)
            self.lookup(gateway)

    def known(self, gateway: Gateway) -> KeyLookup:
        """What was read for this gateway, without reading anything: never blocks."""
        found = self._cache.get(gateway.name)
        if found is not None:
            return found
        if gateway.name in self._later:  # put off, and needed before it was read: read now
            return self.lookup(gateway)
        if not gateway.needs_key:
            return KeyLookup(gateway.name, "kept-local", "not needed")
        return KeyLookup(gateway.name, None, None, f"The {gateway.label} key was not read.")

    def secrets(self, gateways: Iterable[Gateway]) -> list[str]:
        """Every key Kept knows for these gateways, from the keyring and the environment,
        whichever is used: a provider may echo any of them, so all are redacted."""
        for gateway in gateways:
            if gateway.env_var and self._environ.get(gateway.env_var):
                self._seen.add(self._environ[gateway.env_var])
        return sorted(
            {v for s in self._seen for v in (s, s.strip()) if len(v) >= 4}, key=len, reverse=True
        )  # the longest first: no key left half-hidden

    def _keyring_get(self, gateway: str) -> str | None:
        import keyring
        import keyring.errors

        try:
            return keyring.get_password(KEYRING_SERVICE, gateway)
        except keyring.errors.NoKeyringError:
            self._keyring_unavailable(
                "No OS keyring is available on this system, so Kept reads API keys from "
                "environment variables (GROQ_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY, "
                "GEMINI_API_KEY, ...)."
            )
        except keyring.errors.KeyringError as exc:
            self._keyring_unavailable(
                f"The OS keyring could not be read ({type(exc).__name__}: {exc}); unlock it, "
                "or use environment variables such as GROQ_API_KEY."
            )
        return None

    def _keyring_unavailable(self, sentence: str) -> None:
        self.keyring_problem = sentence
        if not self._said:
            self._said = True
            log.info(sentence)

    def lookup(self, gateway: Gateway) -> KeyLookup:
        cached = self._cache.get(gateway.name)
        if cached is not None:
            return cached
        with self._reading:
            cached = self._cache.get(gateway.name)  # read by another thread meanwhile
            if cached is not None:
                return cached
            found = self._lookup(gateway)
            self._cache[gateway.name] = found
            return found

    def _lookup(self, gateway: Gateway) -> KeyLookup:
        if not gateway.needs_key:
            return KeyLookup(gateway.name, "kept-local", "not needed")
        return self._resolve(gateway, self._keyring_get(gateway.name))

    def _resolve(self, gateway: Gateway, stored: str | None) -> KeyLookup:
        """The key to use given what the keyring holds: it, else the environment's."""
        problems: list[str] = []
        if stored:
            self._seen.add(stored)
        if stored is not None:
            problem = key_problem(stored, f"The {gateway.name} key in the OS keyring")
            if problem is None:
                return KeyLookup(gateway.name, stored, "keyring")
            problems.append(problem)
        if gateway.env_var:
            env_value = self._environ.get(gateway.env_var)
            if env_value is not None:
                problem = key_problem(env_value, f"The {gateway.env_var} environment variable")
                if problem is None:
                    return KeyLookup(gateway.name, env_value, "env")
                problems.append(problem)
        if not problems:
            hint = f" or the {gateway.env_var} environment variable" if gateway.env_var else ""
            problem = f"No key for {gateway.label}: none in the OS keyring{hint}."
            return KeyLookup(gateway.name, None, None, problem, missing=True)
        return KeyLookup(gateway.name, None, None, problems[0])

    def set(self, gateway: Gateway, value: str) -> None:
        """Store a key in the OS keyring; raises KeyStoreError with a sentence on failure."""
        import keyring
        import keyring.errors

        problem = key_problem(value, f"The {gateway.name} key")
        if problem:
            raise KeyStoreError(problem)
        try:
            keyring.set_password(KEYRING_SERVICE, gateway.name, value)
        except keyring.errors.KeyringError as exc:
            raise KeyStoreError(
                f"The OS keyring refused the {gateway.name} key ({type(exc).__name__}); "
                f"set {gateway.env_var} in your environment instead."
            ) from None
        self._seen.add(value)
        self._cache[gateway.name] = KeyLookup(gateway.name, value, "keyring")

    def delete(self, gateway: Gateway) -> bool:
        """Remove a stored key; False when there was none."""
        import keyring
        import keyring.errors

        try:
            keyring.delete_password(KEYRING_SERVICE, gateway.name)
        except keyring.errors.PasswordDeleteError:
            self._cache[gateway.name] = self._resolve(gateway, None)
            return False
        except keyring.errors.KeyringError as exc:
            self._cache.pop(gateway.name, None)
            raise KeyStoreError(
                f"The OS keyring could not delete the {gateway.name} key ({type(exc).__name__})."
            ) from None
        self._cache[gateway.name] = self._resolve(gateway, None)  # the environment's, if any
        return True


class TrialKeys(KeyStore):
    """A store's keys, with one gateway's key replaced by the one being tried
    (catalog.probe.try_key)."""

    def __init__(self, keys: KeyStore, gateway: str, value: str) -> None:
        super().__init__(environ={})
        self._keys, self._gateway, self._value = keys, gateway, value
        self.keyring_problem = keys.keyring_problem

    def known(self, gateway: Gateway) -> KeyLookup:
        if gateway.name == self._gateway:
            return KeyLookup(gateway.name, self._value, "trial")
        return self._keys.known(gateway)

    def lookup(self, gateway: Gateway) -> KeyLookup:
        return self.known(gateway)

    def secrets(self, gateways: Iterable[Gateway]) -> list[str]:
        return sorted({*self._keys.secrets(gateways), self._value}, key=len, reverse=True)
