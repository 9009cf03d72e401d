"""First run without a usable key: store one, or point Kept at a local server.

The local path (app.widgets.local_server, shared with /keys) checks everything before it
saves anything. What it saves (the gateway's address, the model and its window) is all the
memory needs as well: with no cloud key, the chosen local model heads the consolidation
chain.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static

from app.screens.dialog import Dialog
from app.widgets.local_server import LocalServerForm
from catalog import KeyStoreError

if TYPE_CHECKING:
    from app.main import KeptApp


class OnboardingScreen(Dialog[None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Later")]
    # Focused in on_mount: AUTO_FOCUS would scroll a short terminal past the title.
    AUTO_FOCUS = None

    app: KeptApp

    def compose(self) -> ComposeResult:
        gateways = [g for g in self.app.catalog.gateways.values() if g.needs_key]
        problem = self.app.catalog.keys.keyring_problem
        with VerticalScroll(classes="dialog"):
            yield Label("Welcome to Kept", classes="dialog-title")
            yield Static(
                "Kept needs one way to reach a model: an API key for a provider, "
                "or a local OpenAI-compatible server (Ollama, llama.cpp, LM Studio).",
                markup=False,
            )
            yield Label("An API key", classes="dialog-title section-title")
            if problem:
                others = ", ".join(g.env_var for g in gateways if g.env_var and g.name != "groq")
                yield Static(
                    f"{problem}\nSet one in your shell and restart Kept, e.g. "
                    f"export GROQ_API_KEY=... (or {others}).",
                    id="no-keyring",
                    markup=False,
                )
            else:
                yield Select(
                    [(g.label, g.name) for g in gateways],
                    value="groq",
                    allow_blank=False,
                    id="gateway",
                )
                yield Input(placeholder="Paste your API key, then Enter", password=True, id="key")
                with Horizontal(classes="buttons"):
                    yield Button("Save key", id="save-key", variant="primary")
            yield Label("Or a local server", classes="dialog-title section-title")
            yield LocalServerForm(
                status_id="onboarding-status", buttons=[Button("Later", id="later")]
            )

    def on_mount(self) -> None:
        # The first field takes the keys, and the dialog opens at its title: the field is
        # scrolled to only when the terminal is too short to show both.
        field = self.query_one("#key, #base-url", Input)
        field.focus(scroll_visible=False)
        self.call_after_refresh(self._show_focus)

    def _show_focus(self) -> None:
        field = self.query_one("#key, #base-url", Input)
        if field.region.bottom > self.query_one(VerticalScroll).scrollable_content_region.bottom:
            field.scroll_visible(animate=False)

    def _say(self, text: str) -> None:
        self.query_one(LocalServerForm).say(text)

    # --- a key ---------------------------------------------------------------------------

    @on(Button.Pressed, "#save-key")
    @on(Input.Submitted, "#key")
    async def save_key(self) -> None:
        from app.keytest import try_key

        name = self.query_one("#gateway", Select).value
        gateway = self.app.catalog.gateways[str(name)]
        value = self.query_one("#key", Input).value.strip()
        if not value:
            self._say(f"Paste your {gateway.label} key first.")
            return
        from catalog.keys import key_problem

        if problem := key_problem(value, f"The {gateway.name} key"):  # before any request
            self._say(problem)
            return
        self._say(f"Testing the {gateway.label} key…")
        problem = await try_key(self.app, gateway, value)
        if problem:  # found now, not on the first message
            self._say(f"{problem} The key was not saved; check it and try again.")
            return
        try:
            await asyncio.to_thread(self.app.catalog.keys.set, gateway, value)
        except KeyStoreError as exc:
            self._say(str(exc))
            return
        self.app.notify(
            f"Saved the {gateway.label} key in the OS keyring.", title="Keys", markup=False
        )
        models = [e for e in self.app.catalog.visible() if e.gateway == gateway.name]
        if models and self.app.catalog.get(self.app.model).gateway != gateway.name:
            # The balanced tier: a frontier model as the default would surprise the bill.
            balanced = [e for e in models if e.tier == "balanced"]
            self.app.set_model((balanced or models)[0].id)
        self.dismiss(None)

    # --- a local server ------------------------------------------------------------------

    @on(LocalServerForm.Saved)
    def local_saved(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#later")
    def later(self) -> None:
        self.dismiss(None)
