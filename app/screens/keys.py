"""/keys: set, replace, delete and test the key of each gateway; and the local server."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Collapsible, Label, OptionList, Static
from textual.widgets.option_list import Option

from app.keytest import try_key
from app.screens.dialog import Dialog
from app.widgets.key_form import KeyForm
from app.widgets.local_server import LocalServerForm
from catalog import Gateway, KeyStoreError

if TYPE_CHECKING:
    from app.main import KeptApp


class KeysScreen(Dialog[None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    app: KeptApp

    gateways: list[Gateway]

    def compose(self) -> ComposeResult:
        self.gateways = [g for g in self.app.catalog.gateways.values() if g.needs_key]
        with VerticalScroll(classes="dialog"):
            yield Label("API keys", classes="dialog-title")
            yield OptionList(*self._options(), id="gateways")
            no_keyring = self.app.catalog.keys.keyring_problem is not None
            yield KeyForm(
                lambda: self.selected,
                self._say,
                placeholder="No OS keyring: set the key in your environment"
                if no_keyring
                else "Paste the key, then Enter",
                disabled=no_keyring,
            )
            with Horizontal(classes="buttons"):
                if not no_keyring:  # nowhere to save a key: only testing is offered
                    yield Button("Save", id="save", variant="primary")
                    yield Button("Delete", id="delete", variant="error")
                yield Button("Test", id="test")
                yield Button("Close", id="close")
            yield Static("", id="key-status", markup=False)
            problem = self.app.catalog.keys.keyring_problem
            yield Label(
                problem or 'Keys are stored in your OS keyring (service "kept"), never in a file.',
                classes="hint",
            )
            # Folded: /keys opens on the keys; the local server is one key press away.
            with Collapsible(title="Local server", collapsed=True, id="local-server"):
                local = self.app.catalog.gateways["local"].base_url
                yield LocalServerForm(local or "", status_id="local-status")

    def _options(self) -> list[Option]:
        options = []
        for gateway in self.gateways:
            found = self.app.catalog.keys.known(gateway)  # read already: never blocks
            line = Text()
            # At most 48 columns: one line per gateway at 60 columns.
            line.append(f"{gateway.label:14}", style="bold")
            if found.usable:
                line.append(f"{'key from ' + str(found.source):17}", style="green")
            else:
                line.append(f"{'no key':17}", style="red")
            if gateway.env_var:
                line.append(gateway.env_var, style="dim")
            options.append(Option(line, id=gateway.name))
        return options

    def _refresh(self) -> None:
        option_list = self.query_one("#gateways", OptionList)
        highlighted = option_list.highlighted
        option_list.clear_options()
        option_list.add_options(self._options())
        option_list.highlighted = highlighted

    @property
    def selected(self) -> Gateway:
        """The gateway highlighted in the list."""
        index = self.query_one("#gateways", OptionList).highlighted or 0
        return self.gateways[index]

    def _say(self, text: str) -> None:
        status = self.query_one("#key-status", Static)
        status.update(text)
        self.call_after_refresh(status.scroll_visible)  # a short terminal must show it

    def on_mount(self) -> None:
        gateways = self.query_one("#gateways", OptionList)
        gateways.highlighted = 0
        # The list first: the arrows choose the gateway before any key is typed for it.
        gateways.focus()
        self._confirm_delete: str | None = None

    @on(OptionList.OptionHighlighted, "#gateways")
    def highlighted(self) -> None:
        key = self.query_one(KeyForm)
        if not key.disabled:  # Enter tests the key, then saves it
            key.placeholder = f"Paste the {self.selected.label} key, then Enter"
        self._confirm_delete = None

    @on(OptionList.OptionSelected, "#gateways")
    def chosen(self) -> None:
        key = self.query_one(KeyForm)
        if not key.disabled:
            key.focus()

    @on(Button.Pressed, "#save")
    def save(self) -> None:
        self.query_one(KeyForm).submit()

    @on(KeyForm.Saved)
    def saved(self, event: KeyForm.Saved) -> None:
        # The stored key is the known one: the list is redrawn without reading it back.
        self._say(f"Saved the {event.gateway.label} key in the OS keyring.")
        self._refresh()

    @on(Button.Pressed, "#delete")
    async def delete(self) -> None:
        gateway = self.selected
        if self._confirm_delete != gateway.name:
            self._confirm_delete = gateway.name
            self._say(f"Press Delete again to delete the {gateway.label} key.")
            return
        self._confirm_delete = None
        try:
            removed = await asyncio.to_thread(self.app.catalog.keys.delete, gateway)
        except KeyStoreError as exc:
            self._say(str(exc))
            return
        self._say(
            f"Deleted the {gateway.label} key."
            if removed
            else f"No {gateway.label} key was stored in the keyring."
        )
        self._refresh()

    @on(Button.Pressed, "#test")
    def test(self) -> None:
        gateway = self.selected
        self._say(f"Testing {gateway.label}…")
        self._test(gateway)

    @work(exclusive=True, group="key-test", exit_on_error=False)
    async def _test(self, gateway: Gateway) -> None:
        problem = await try_key(self.app, gateway)
        self._say(problem or f"{gateway.label} works.")

    @on(Button.Pressed, "#close")
    def close(self) -> None:
        self.dismiss(None)
