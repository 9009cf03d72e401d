"""A local server as the chat model: its address, its models, the window it runs with.

One form for onboarding and /keys. It checks everything before it saves anything: the
address answers, the model is one the server has, and a short test message gets a reply.
A window the server says (llama-server, Ollama) is used as it is; where the server does not
say it (llama-cpp-python, LM Studio) the form asks, offering the server's own default.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from app.main import KeptApp
    from catalog.probe import ServerProbe

LOCAL_DEFAULT = "http://127.0.0.1:11434/v1"  # Ollama's; llama.cpp and LM Studio differ


def _sentence(problem: str) -> str:
    return f"{problem[:1].upper()}{problem[1:]}. Start your server, or fix the address."


class LocalServerForm(Vertical):
    """Address, Find models, a pick, and the window when the server does not say it; a
    model that answers a test message is saved as the chat model (`Saved`)."""

    app: KeptApp

    DEFAULT_CSS = "LocalServerForm { height: auto; }"

    class Saved(Message):
        """The model answered its test message and is saved as the chat model."""

        def __init__(self, model: str, base_url: str) -> None:
            super().__init__()
            self.model, self.base_url = model, base_url

    def __init__(
        self, address: str = LOCAL_DEFAULT, *, status_id: str, buttons: Iterable[Button] = ()
    ) -> None:
        super().__init__()
        self._address, self._status_id, self._buttons = address, status_id, tuple(buttons)
        self._probe: ServerProbe | None = None

    def compose(self) -> ComposeResult:
        yield Input(
            value=self._address,
            id="base-url",
            placeholder="Server address, then Enter to list its models",
        )
        yield OptionList(id="server-models", markup=False)
        yield Input(placeholder="Model name on that server, e.g. llama3.2", id="local-model")
        yield Input(
            placeholder="Its context window in tokens, as the server was started with",
            id="context-window",
            type="integer",
        )
        with Horizontal(classes="buttons"):
            yield Button("Find models", id="probe")
            yield Button("Use local server", id="use-local")
            yield from self._buttons
        yield Static("", id=self._status_id, markup=False)

    def on_mount(self) -> None:
        # Shown when needed: the list once the server has listed its models, the name when
        # it lists none (or none was picked), the window when the server does not say it.
        # The buttons stay in sight at 80x24 under the dialog's title.
        for hidden in ("#server-models", "#local-model", "#context-window"):
            self.query_one(hidden).display = False

    def say(self, text: str) -> None:
        """Show `text` below the buttons, scrolled into sight on a short terminal."""
        status = self.query_one(f"#{self._status_id}", Static)
        status.update(text)
        self.call_after_refresh(status.scroll_visible)  # after the layout settles

    def _ask_window(self, unsaid: bool, default: int) -> None:
        """Show the window field where the server does not say its window, holding the
        server's default unless the user already changed it."""
        field = self.query_one("#context-window", Input)
        if unsaid and not field.display:
            field.value = str(default)
        field.display = unsaid

    def _ask_name(self) -> None:
        field = self.query_one("#local-model", Input)
        field.display = True
        field.focus()

    # --- the server's models -----------------------------------------------------------

    @on(Button.Pressed, "#probe")
    @on(Input.Submitted, "#base-url")
    def find_models(self, event: Message) -> None:
        event.stop()
        url = self.query_one("#base-url", Input).value.strip()
        self.say(f"Asking {url} for its models…")
        self._find_models(url)

    @work(exclusive=True, group="local-server", exit_on_error=False)
    async def _find_models(self, url: str) -> None:
        from catalog.probe import probe_server

        probe = await asyncio.to_thread(probe_server, url)
        self._probe = probe
        listing = self.query_one("#server-models", OptionList)
        listing.clear_options()
        listing.display = False
        if not probe.ok:
            self.say(_sentence(probe.problem))
            return
        unsaid = not probe.models or any(m.context_window is None for m in probe.models)
        self._ask_window(unsaid, probe.default_window)
        window = (
            " The server does not say its context window: if it is not "
            f"{probe.default_window:,} tokens, Tab to give it below, then Enter."
            if unsaid
            else ""
        )
        window += elsewhere(probe.base_url)
        if not probe.models:
            self.say(
                f"{probe.base_url} answers but lists no models: pull or load one, or "
                f"type its name below.{window}"
            )
            self._ask_name()
            return
        listing.add_options([Option(m.id, id=m.id) for m in probe.models])
        listing.display = True
        listing.highlighted = 0
        listing.focus()
        self.say(
            f"{len(probe.models)} model(s) at {probe.base_url}: pick one with the arrows and "
            f"Enter.{window}"
        )

    @on(OptionList.OptionSelected, "#server-models")
    def model_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.query_one("#local-model", Input).value = event.option.id or ""
        self.use_local()

    # --- the test message, then the save ------------------------------------------------

    @on(Button.Pressed, "#use-local")
    @on(Input.Submitted, "#local-model, #context-window")
    def submitted(self, event: Message) -> None:
        event.stop()
        self.use_local()

    def use_local(self) -> None:
        from catalog.config import MIN_WINDOW, valid_url

        base_url = self.query_one("#base-url", Input).value.strip().rstrip("/")
        model = self.query_one("#local-model", Input).value.strip()
        listing = self.query_one("#server-models", OptionList)
        if not model and listing.display and listing.highlighted is not None:
            # Enter in the window field: the model highlighted in the list.
            model = listing.get_option_at_index(listing.highlighted).id or ""
        if not valid_url(base_url):
            self.say("The server address must start with http:// or https://.")
            return
        if not model:
            self.say(
                "Name the model your server runs, e.g. llama3.2, or press Enter in the "
                "address to list them."
            )
            self._ask_name()
            return
        field = self.query_one("#context-window", Input)
        window = None
        if field.display:
            text = field.value.strip()
            if not text.isdigit() or int(text) < MIN_WINDOW:
                self.say(
                    f"The context window must be a whole number of tokens, at least "
                    f"{MIN_WINDOW}: what the server was started with."
                )
                field.focus()
                return
            window = int(text)
        self.say(f"Sending a test message to {model}…")
        self._try_local(base_url, model, window)

    @work(exclusive=True, group="local-server", exit_on_error=False)
    async def _try_local(self, url: str, model: str, asked: int | None) -> None:
        from catalog.probe import probe_server

        probe = (
            self._probe
            if self._probe and self._probe.url == url
            else await asyncio.to_thread(probe_server, url)
        )
        if not probe.ok or probe.base_url is None:
            self.say(_sentence(probe.problem))
            return
        known = {m.id for m in probe.models}
        if known and model not in known:
            self.say(f"{probe.base_url} has no model '{model}'; it has {', '.join(sorted(known))}.")
            return
        # The server's word first; else the user's; else the server's own default.
        window = probe.window(model) or asked or probe.default_window
        problem = await self.app.use_local_model(probe.base_url, model, window)
        if problem:
            self.say(problem)
            return
        label = self.app.catalog.get(model).label
        said = "" if probe.window(model) or asked else f" (a {window:,}-token context window)"
        self.app.notify(
            f"Chatting with {label} on {probe.base_url}{said}; it saves your memory too.",
            title="Local server",
            markup=False,
        )
        self.say(f"Chatting with {label} on {probe.base_url}, in a {window:,}-token window.")
        self.post_message(self.Saved(model, probe.base_url))


def elsewhere(base_url: str | None) -> str:
    """The sentence that says a server is not on this machine ("" when it is)."""
    from catalog.config import remote_host

    host = remote_host(base_url)
    return f" {host} is not this machine: your transcripts are sent there." if host else ""
