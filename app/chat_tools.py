"""The chat's side of the user's tool servers: the toolbox, built once from config; the
consent prompt before a call; each call drawn in the conversation; their notices."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.widget import Widget

from app.mcp_tools import declared_servers, save_server, toolbox_for
from catalog.mcp import McpTool, ToolBox
from memory.chat.turn import Approval, ToolRun

if TYPE_CHECKING:
    from app.main import KeptApp
    from app.screens.chat import ChatScreen


class ChatTools:
    """What the chat screen hands to a turn: the toolbox, `approve` and `show`."""

    def __init__(self, screen: ChatScreen) -> None:
        self.screen = screen
        app: KeptApp = screen.app
        from app.settings import config_path

        self.config_path = app.config_path or config_path()
        settings = app.settings.mcp
        self.toolbox: ToolBox = toolbox_for(settings, self.config_path.parent, app.store.root)
        self.problems = declared_servers(settings, self.config_path.parent)[1]
        self._said: set[str] = set()

    async def approve(self, tool: McpTool, arguments: str) -> Approval:
        """Ask the user (the turn waits); "always" is kept in config.toml for this tool."""
        from app.screens.consent import ConsentDialog

        dialog = ConsentDialog(tool, arguments)
        try:
            choice = await self.screen.app.push_screen_wait(dialog)
        except asyncio.CancelledError:  # the reply was stopped: the question goes with it
            if self.screen.app.screen is dialog:
                self.screen.app.pop_screen()
            raise
        if choice is Approval.ALWAYS:
            spec = self.toolbox.servers[tool.server].spec
            try:
                await asyncio.to_thread(save_server, self.config_path, spec, allow=tool.name)
            except (OSError, ValueError) as exc:
                self.screen.app.notify(
                    f"{exc} It runs without asking until Kept quits.",
                    title="Settings not saved",
                    severity="error",
                    markup=False,
                )
        return choice

    def show(self, run: ToolRun, before: Widget) -> None:
        """The call, collapsed, above the reply it feeds."""
        from app.widgets.tool_call import ToolCallView

        log = self.screen.query_one("#messages", VerticalScroll)
        log.mount(ToolCallView(run), before=before if before.parent is log else None)

    def unsaid(self, notices: list[str]) -> list[str]:
        """The notices not yet shown in this chat: each said once (a model without tools
        is said when first used, not at every message)."""
        fresh = [n for n in notices if n not in self._said]
        self._said.update(fresh)
        return fresh

    def open_screen(self) -> None:
        from app.screens.tools import ToolsScreen

        self.screen.app.push_screen(ToolsScreen(self.toolbox, self.config_path, self.problems))

    async def close(self) -> None:
        await self.toolbox.close()
