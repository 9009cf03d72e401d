"""First run without a usable key: store one, or point Kept at a local server."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static

from app.screens.dialog import Dialog
from catalog import KeyStoreError

if TYPE_CHECKING:
    from app.main import KeptApp


class OnboardingScreen(Dialog[None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Later")]

    app: KeptApp

    def compose(self) -> ComposeResult:
        gateways = [g for g in self.app.catalog.gateways.values() if g.needs_key]
        problem = self.app.catalog.keys.keyring_problem
        with VerticalScroll(classes="dialog"):
            yield Label("Welcome to Kept", classes="dialog-title")
            yield Static("Kept needs one way to reach a model: an API key for a provider, "
                         "or a local OpenAI-compatible server (Ollama, llama.cpp, LM Studio).",
                         markup=False)
            yield Label("An API key", classes="dialog-title")
            if problem:
                env = "\n".join(f"  export {g.env_var}=..." for g in gateways if g.env_var)
                yield Static(f"{problem}\nSet one of these in your shell and restart Kept:\n"
                             f"{env}", id="no-keyring", markup=False)
            else:
                yield Select([(g.label, g.name) for g in gateways], value="groq",
                             allow_blank=False, id="gateway")
                yield Input(placeholder="Paste your API key", password=True, id="key")
                with Horizontal(classes="buttons"):
                    yield Button("Save key", id="save-key", variant="primary")
            yield Label("Or a local server", classes="dialog-title")
            yield Input(value="http://127.0.0.1:11434/v1", id="base-url")
            yield Input(placeholder="Model name on that server, e.g. llama3.2", id="local-model")
            with Horizontal(classes="buttons"):
                yield Button("Use local server", id="use-local")
                yield Button("Later", id="later")
            yield Static("", id="onboarding-status", markup=False)

    def _say(self, text: str) -> None:
        self.query_one("#onboarding-status", Static).update(text)

    @on(Button.Pressed, "#save-key")
    @on(Input.Submitted, "#key")
    async def save_key(self) -> None:
        name = self.query_one("#gateway", Select).value
        gateway = self.app.catalog.gateways[str(name)]
        try:
            await asyncio.to_thread(self.app.catalog.keys.set, gateway,
                                    self.query_one("#key", Input).value)
        except KeyStoreError as exc:
            self._say(str(exc))
            return
        self.app.notify(f"Saved the {gateway.label} key in the OS keyring.", title="Keys",
                        markup=False)
        models = [e for e in self.app.catalog.visible() if e.gateway == gateway.name]
        if models and self.app.catalog.get(self.app.model).gateway != gateway.name:
            self.app.set_model(models[0].id)
        self.app.refresh_status()
        self.dismiss(None)

    @on(Button.Pressed, "#use-local")
    def use_local(self) -> None:
        from app.settings import add_local_model
        from catalog import load_catalog
        from catalog.config import valid_url

        base_url = self.query_one("#base-url", Input).value.strip()
        model = self.query_one("#local-model", Input).value.strip()
        if not valid_url(base_url):
            self._say("The server address must start with http:// or https://.")
            return
        if not model:
            self._say("Name the model your server runs, e.g. llama3.2.")
            return
        try:
            add_local_model(model, base_url, self.app.config_path)
        except (OSError, ValueError) as exc:
            self._say(str(exc))
            return
        self.app.catalog = load_catalog(self.app.config_path, self.app.catalog.keys)
        self.app.set_model(model)
        self.app.refresh_status()
        self.dismiss(None)

    @on(Button.Pressed, "#later")
    def later(self) -> None:
        self.dismiss(None)
