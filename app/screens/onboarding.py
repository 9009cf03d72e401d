"""First run without a usable key: store one, or point Kept at a local server.

The local path checks everything before it saves anything: the address answers, the model
is one the server has, and a short test message gets a reply. What it saves (the gateway's
address and the model) is all the memory needs as well: with no cloud key, the chosen
local model heads the consolidation chain.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from app.screens.dialog import Dialog
from catalog import KeyStoreError

if TYPE_CHECKING:
    from app.main import KeptApp
    from catalog.probe import ServerProbe

LOCAL_DEFAULT = "http://127.0.0.1:11434/v1"  # Ollama's; llama.cpp and LM Studio differ


class OnboardingScreen(Dialog[None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Later")]
    AUTO_FOCUS = "#key, #base-url"

    app: KeptApp

    def __init__(self) -> None:
        super().__init__()
        self._probe: ServerProbe | None = None

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
            yield Input(
                value=LOCAL_DEFAULT,
                id="base-url",
                placeholder="Server address, then Enter to list its models",
            )
            yield OptionList(id="server-models")
            yield Input(placeholder="Model name on that server, e.g. llama3.2", id="local-model")
            with Horizontal(classes="buttons"):
                yield Button("Find models", id="probe")
                yield Button("Use local server", id="use-local")
                yield Button("Later", id="later")
            yield Static("", id="onboarding-status", markup=False)

    def on_mount(self) -> None:
        self.query_one("#server-models", OptionList).display = False

    def _say(self, text: str) -> None:
        status = self.query_one("#onboarding-status", Static)
        status.update(text)
        # A short terminal would hide it below the buttons; after the layout settles.
        self.call_after_refresh(status.scroll_visible)

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

    @on(Button.Pressed, "#probe")
    @on(Input.Submitted, "#base-url")
    def find_models(self) -> None:
        url = self.query_one("#base-url", Input).value.strip()
        self._say(f"Asking {url} for its models…")
        self._find_models(url)

    @work(exclusive=True, group="onboarding", exit_on_error=False)
    async def _find_models(self, url: str) -> None:
        from catalog.probe import probe_server

        probe = await asyncio.to_thread(probe_server, url)
        self._probe = probe
        listing = self.query_one("#server-models", OptionList)
        listing.clear_options()
        if not probe.ok:
            listing.display = False
            self._say(
                f"{probe.problem[:1].upper()}{probe.problem[1:]}. Start your server, "
                "or fix the address."
            )
            return
        if not probe.models:
            listing.display = False
            self._say(
                f"{probe.base_url} answers but lists no models: pull or load one, or "
                "type its name below."
            )
            self.query_one("#local-model", Input).focus()
            return
        listing.add_options([Option(m.id, id=m.id) for m in probe.models])
        listing.display = True
        listing.highlighted = 0
        listing.focus()
        self._say(
            f"{len(probe.models)} model(s) at {probe.base_url}: pick one with the arrows and Enter."
        )

    @on(OptionList.OptionSelected, "#server-models")
    def model_chosen(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#local-model", Input).value = event.option.id or ""
        self.use_local()

    @on(Button.Pressed, "#use-local")
    @on(Input.Submitted, "#local-model")
    def use_local(self) -> None:
        from catalog.config import valid_url

        base_url = self.query_one("#base-url", Input).value.strip().rstrip("/")
        model = self.query_one("#local-model", Input).value.strip()
        if not valid_url(base_url):
            self._say("The server address must start with http:// or https://.")
            return
        if not model:
            self._say(
                "Name the model your server runs, e.g. llama3.2, or press Enter in the "
                "address to list them."
            )
            return
        self._say(f"Sending a test message to {model}…")
        self._try_local(base_url, model)

    @work(exclusive=True, group="onboarding", exit_on_error=False)
    async def _try_local(self, url: str, model: str) -> None:
        from catalog.probe import probe_server

        probe = (
            self._probe
            if self._probe and self._probe.url == url
            else await asyncio.to_thread(probe_server, url)
        )
        if not probe.ok or probe.base_url is None:
            self._say(
                f"{probe.problem[:1].upper()}{probe.problem[1:]}. Start your server, "
                "or fix the address."
            )
            return
        known = {m.id: m for m in probe.models}
        if known and model not in known:
            self._say(
                f"{probe.base_url} has no model '{model}'; it has {', '.join(sorted(known))}."
            )
            return
        window = known[model].context_window if model in known else None
        problem = await self.app.use_local_model(probe.base_url, model, window)
        if problem:
            self._say(problem)
            return
        self.app.notify(
            f"Chatting with {model} on {probe.base_url}; it saves your memory too.",
            title="Local server",
            markup=False,
        )
        self.dismiss(None)

    @on(Button.Pressed, "#later")
    def later(self) -> None:
        self.dismiss(None)
