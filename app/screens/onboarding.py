"""First run without a usable key: store one, or point Kept at a local server.

The key's field (app.widgets.key_form) and the local path (app.widgets.local_server) are
the ones /keys uses; each checks everything before it saves anything. What the local path
saves (the gateway's address, the model and its window) is all the memory needs as well:
with no cloud key, the chosen local model heads the consolidation chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static

from app.messages import ModelChosen
from app.screens.dialog import Dialog
from app.widgets.key_form import KeyForm
from app.widgets.local_server import LocalServerForm

if TYPE_CHECKING:
    from app.main import KeptApp
    from catalog import Gateway


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
                yield KeyForm(
                    self._gateway, self._say, placeholder="Paste your API key, then Enter"
                )
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

    def _gateway(self) -> Gateway:
        return self.app.catalog.gateways[str(self.query_one("#gateway", Select).value)]

    @on(Button.Pressed, "#save-key")
    def save_key(self) -> None:
        self.query_one(KeyForm).submit()

    @on(KeyForm.Saved)
    def key_saved(self, event: KeyForm.Saved) -> None:
        gateway = event.gateway
        self.app.notify(
            f"Saved the {gateway.label} key in the OS keyring.", title="Keys", markup=False
        )
        models = [e for e in self.app.catalog.visible() if e.gateway == gateway.name]
        if models and self.app.catalog.get(self.app.model).gateway != gateway.name:
            # The balanced tier: a frontier model as the default would surprise the bill.
            balanced = [e for e in models if e.tier == "balanced"]
            self.post_message(ModelChosen((balanced or models)[0].id))
        self.dismiss(None)

    # --- a local server ------------------------------------------------------------------

    @on(LocalServerForm.Saved)
    def local_saved(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#later")
    def later(self) -> None:
        self.dismiss(None)
