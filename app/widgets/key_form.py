"""The field a gateway's key is pasted in, for /keys and onboarding: the key is checked,
tried with one tiny request, and only then kept in the OS keyring (`Saved`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work
from textual.message import Message
from textual.widgets import Input

from catalog import Gateway, KeyStoreError

if TYPE_CHECKING:
    from app.main import KeptApp


class KeyForm(Input):
    """A masked field: Enter (or `submit`) tries the key for the gateway the screen has
    chosen, and says each step with `say`; the screen decides what follows a save."""

    app: KeptApp

    class Saved(Message):
        """The key answered its test request and is in the OS keyring."""

        def __init__(self, gateway: Gateway) -> None:
            super().__init__()
            self.gateway = gateway

    def __init__(
        self,
        gateway: Callable[[], Gateway],
        say: Callable[[str], None],
        *,
        placeholder: str,
        disabled: bool = False,
    ) -> None:
        super().__init__(placeholder=placeholder, password=True, id="key", disabled=disabled)
        self._gateway, self._say = gateway, say

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def submit(self) -> None:
        """Check the key as typed, then try it and keep it, off the event loop."""
        gateway, value = self._gateway(), self.value.strip()
        if not value:
            self._say(f"Paste the {gateway.label} key first.")
            return
        from catalog.keys import key_problem

        if problem := key_problem(value, f"The {gateway.name} key"):  # before any request
            self._say(problem)
            return
        self._say(f"Testing the {gateway.label} key…")
        self._keep(gateway, value)

    @work(exclusive=True, group="key-form", exit_on_error=False)
    async def _keep(self, gateway: Gateway, value: str) -> None:
        from app.keytest import try_key

        problem = await try_key(self.app, gateway, value)
        if problem:  # found now, not on the first message
            self._say(f"{problem} The key was not saved; check it and try again.")
            return
        try:
            # A locked keyring may ask to be unlocked: never on the screen's loop. The
            # stored key becomes the known one: nothing reads it back.
            await asyncio.to_thread(self.app.catalog.keys.set, gateway, value)
        except KeyStoreError as exc:
            self._say(str(exc))
            return
        self.value = ""
        self.post_message(self.Saved(gateway))
