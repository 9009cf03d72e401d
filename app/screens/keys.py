"""/keys: set, replace, delete and test the key of each gateway."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from app.screens.dialog import Dialog
from catalog import Gateway, KeyStoreError, complete

if TYPE_CHECKING:
    from app.main import KeptApp


class KeysScreen(Dialog[None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    app: KeptApp

    gateways: list[Gateway]

    def compose(self) -> ComposeResult:
        self.gateways = [g for g in self.app.catalog.gateways.values() if g.needs_key]
        with Vertical(classes="dialog"):
            yield Label("API keys", classes="dialog-title")
            yield OptionList(*self._options(), id="gateways")
            yield Input(placeholder="Paste the key for the highlighted gateway", password=True,
                        id="key")
            with Horizontal(classes="buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Delete", id="delete", variant="error")
                yield Button("Test", id="test")
                yield Button("Close", id="close")
            yield Static("", id="key-status", markup=False)
            problem = self.app.catalog.keys.keyring_problem
            yield Label(problem or "Keys are stored in your OS keyring (service \"kept\"), "
                        "never in a file.", classes="hint")

    def _options(self) -> list[Option]:
        options = []
        for gateway in self.gateways:
            found = self.app.catalog.keys.lookup(gateway)
            line = Text()
            line.append(f"{gateway.label:16}", style="bold")
            if found.usable:
                line.append(f"{'key from ' + str(found.source):20}", style="green")
            else:
                line.append(f"{'no key':20}", style="red")
            if gateway.env_var:
                line.append(f"env: {gateway.env_var}", style="dim")
            options.append(Option(line, id=gateway.name))
        return options

    def _refresh(self) -> None:
        option_list = self.query_one(OptionList)
        highlighted = option_list.highlighted
        option_list.clear_options()
        option_list.add_options(self._options())
        option_list.highlighted = highlighted

    def _selected(self) -> Gateway:
        index = self.query_one(OptionList).highlighted or 0
        return self.gateways[index]

    def _say(self, text: str) -> None:
        self.query_one("#key-status", Static).update(text)

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0
        self.query_one(Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#save")
    async def save(self) -> None:
        gateway = self._selected()
        value = self.query_one(Input).value
        try:
            # A locked keyring may ask to be unlocked: never on the screen's loop.
            await asyncio.to_thread(self.app.catalog.keys.set, gateway, value)
        except KeyStoreError as exc:
            self._say(str(exc))
            return
        self.query_one(Input).value = ""
        self._say(f"Saved the {gateway.label} key in the OS keyring.")
        self._refresh()

    @on(Button.Pressed, "#delete")
    async def delete(self) -> None:
        gateway = self._selected()
        try:
            removed = await asyncio.to_thread(self.app.catalog.keys.delete, gateway)
        except KeyStoreError as exc:
            self._say(str(exc))
            return
        self._say(f"Deleted the {gateway.label} key." if removed
                  else f"No {gateway.label} key was stored in the keyring.")
        self._refresh()

    @on(Button.Pressed, "#test")
    def test(self) -> None:
        gateway = self._selected()
        models = [e for e in self.app.catalog.visible() if e.gateway == gateway.name]
        if not models:
            self._say(f"No model uses the {gateway.label} gateway.")
            return
        self._say(f"Testing {gateway.label} with {models[-1].label}…")
        self._test(models[-1].id, gateway.label)

    @work(exclusive=True, group="key-test", exit_on_error=False)
    async def _test(self, model_id: str, label: str) -> None:
        from catalog.llm import litellm

        await asyncio.to_thread(litellm)
        result = await complete(self.app.catalog, model_id,
                                [{"role": "user", "content": "Reply with: ok"}],
                                walk_chain=False, max_tokens=5, policy=self.app.policy)
        if result.ok:
            self._say(f"{label} works: {result.attempts[-1].latency:.1f} s.")
        else:
            self._say(f"{label} failed: {result.attempts[-1].reason if result.attempts else ''}")

    @on(Button.Pressed, "#close")
    def close(self) -> None:
        self.dismiss(None)
