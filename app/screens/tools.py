"""/tools: the tool servers the chat may use, each with its state, its tools and what their
schemas cost on every request; Enter turns the highlighted server on or off (kept in
config.toml)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from catalog.mcp import ServerState, ToolBox, ToolServer

MARKS = {
    ServerState.READY: "●",
    ServerState.STARTING: "…",
    ServerState.FAILED: "✗",
    ServerState.OFF: "○",
}


def server_line(server: ToolServer) -> str:
    """One server in a line: on or off, its state, its tools and their cost."""
    state = server.state
    if not server.spec.enabled and state is ServerState.OFF:
        said = "off"
    elif state is ServerState.READY:
        said = f"on · {len(server.tools)} tools · ~{server.tokens():,} tokens"
    elif state is ServerState.FAILED:
        said = f"failed: {server.reason}"
    elif state is ServerState.STARTING:
        said = "starting…"
    else:
        said = "on · starts with your next message"
    return f"{MARKS[state]} {server.name}  {said}"


def tools_lines(toolbox: ToolBox, server: ToolServer) -> str:
    """The server's tools, each with whether it asks first, and how it is reached."""
    spec = server.spec
    how = spec.url or " ".join([spec.command or "", *spec.args])
    lines = [f"{server.name}: {how}"]
    if server.tools:
        for tool in server.tools:
            asks = "runs without asking" if toolbox.allowed(tool) else "asks first"
            lines.append(f"  {tool.name} — {asks} (~{tool.tokens():,} tokens)")
    elif spec.allowed_tools:
        lines.append(f"  runs without asking: {', '.join(spec.allowed_tools)}")
    return "\n".join(lines)


class ToolsScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("space", "switch", "On/off"),
    ]

    def __init__(self, toolbox: ToolBox, config_path: Path, problems: list[str]) -> None:
        super().__init__()
        self.toolbox, self.config_path, self.problems = toolbox, config_path, problems

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="log-scroll"):
            yield Label("Tool servers", classes="section")
            yield OptionList(id="servers", markup=False)
            yield Static("", id="server-tools", markup=False)
            yield Static("", id="tools-total", markup=False, classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.draw()
        self.query_one(OptionList).focus()

    def draw(self) -> None:
        servers = self.query_one(OptionList)
        highlighted = servers.highlighted
        servers.clear_options()
        servers.add_options(
            Option(server_line(s), id=name) for name, s in self.toolbox.servers.items()
        )
        if self.toolbox.servers:
            servers.highlighted = min(highlighted or 0, len(self.toolbox.servers) - 1)
        offer = self.toolbox.offer()
        sent = sum(t.tokens() for t in offer.tools)
        if not self.toolbox.servers:
            total = (
                "No tool servers yet. Declare one in config.toml ([mcp.servers.NAME] with "
                'command and args, or url), or paste an "mcpServers" JSON object into '
                f"{self.config_path.parent / 'mcp.json'}; each is off until you turn it on here."
            )
        else:
            total = (
                f"Sent with each message: ~{sent:,} of {self.toolbox.max_tool_tokens:,} tokens "
                "([mcp] max_tool_tokens). Enter or Space turns the highlighted server on or off."
            )
        if offer.notice:
            total += "\n" + offer.notice
        total += "".join("\n" + p for p in self.problems)
        self.query_one("#tools-total", Static).update(total)
        self._show_tools()

    @on(OptionList.OptionHighlighted)
    def _show_tools(self) -> None:
        servers = self.query_one(OptionList)
        index = servers.highlighted
        names = list(self.toolbox.servers)
        text = ""
        if index is not None and index < len(names):
            text = tools_lines(self.toolbox, self.toolbox.servers[names[index]])
        self.query_one("#server-tools", Static).update(text)

    @on(OptionList.OptionSelected)
    def _selected(self) -> None:
        self.action_switch()

    def action_switch(self) -> None:
        index = self.query_one(OptionList).highlighted
        names = list(self.toolbox.servers)
        if index is None or index >= len(names):
            return
        server = self.toolbox.servers[names[index]]
        self.toggle(server.name, not server.spec.enabled)

    @work(exclusive=True, group="tools-toggle", exit_on_error=False)
    async def toggle(self, name: str, enabled: bool) -> None:
        """Turn a server on (started now, so its tools and their cost show) or off, and
        keep the choice in config.toml."""
        from app.mcp_tools import save_server

        server = self.toolbox.servers[name]
        if enabled:
            server.state = ServerState.STARTING
            self.draw()
        why = await self.toolbox.set_enabled(name, enabled)
        self.draw()
        try:
            await asyncio.to_thread(save_server, self.config_path, server.spec, enabled=enabled)
        except (OSError, ValueError) as exc:
            self.notify(str(exc), title="Settings not saved", severity="error", markup=False)
        if why:
            self.notify(f"Tool server {name} {why}.", title="Tools", severity="error", markup=False)
