"""The tool servers' default limits, apart from catalog.mcp so that config.toml's schema
can name them without loading the client before the first frame."""

from __future__ import annotations

START_TIMEOUT = 30.0  # seconds for a server to start and list its tools (npx may download)
CALL_TIMEOUT = 60.0  # seconds for one tool call
MAX_TOOL_TOKENS = 8_000  # the tool schemas sent with every request, all servers together
