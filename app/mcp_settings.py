"""The [mcp] table of config.toml: [mcp.server] (Kept's memory served to other tools by
`kept mcp`) and [mcp.servers.NAME] (tool servers the chat may use). One schema for both
directions; a mistake is a sentence and the default stands in for it, and one bad server
entry never costs the others."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from catalog.config import parse_table
from catalog.mcp_limits import CALL_TIMEOUT, MAX_TOOL_TOKENS, START_TIMEOUT
from catalog.sanitize import clean_text
from catalog.schema import STRICT, Field, with_config

SUBTABLES = ("server", "servers")


@with_config(STRICT)
@dataclass(frozen=True)
class McpServerSettings:
    """[mcp.server]: what `kept mcp` lets a client do. With writes off the remember tool is
    not offered at all, so a client's model never tries it."""

    allow_writes: Annotated[bool, Field(strict=True)] = True


@with_config(STRICT)
@dataclass(frozen=True)
class McpLimits:
    """[mcp]'s own keys: what the chat's tool servers may cost. Tool schemas are sent with
    every request, so their total is capped; a server past the cap is left out whole."""

    max_tool_tokens: Annotated[int, Field(ge=100, le=200_000, strict=True)] = MAX_TOOL_TOKENS
    start_timeout: Annotated[float, Field(ge=1, le=600)] = START_TIMEOUT
    call_timeout: Annotated[float, Field(ge=1, le=3_600)] = CALL_TIMEOUT


@with_config(STRICT)
@dataclass(frozen=True)
class McpServerEntry:
    """[mcp.servers.NAME]: a tool server for the chat, launched (command + args, with only
    the environment listed in env) or reached (url + headers); off until enabled."""

    command: Annotated[str | None, Field(strict=True, description="a command to run")] = None
    args: Annotated[list[str], Field(strict=True, description="a list of strings")] = field(
        default_factory=list
    )
    env: Annotated[dict[str, str], Field(strict=True, description="a table of string values")] = (
        field(default_factory=dict)
    )
    url: Annotated[str | None, Field(strict=True, description="an http:// or https:// URL")] = None
    headers: Annotated[
        dict[str, str], Field(strict=True, description="a table of string values")
    ] = field(default_factory=dict)
    enabled: Annotated[bool, Field(strict=True)] = False
    allowed_tools: Annotated[list[str], Field(strict=True, description="a list of tool names")] = (
        field(default_factory=list)
    )


@dataclass(frozen=True)
class McpSettings:
    """The whole [mcp] table, read; `problems` holds a sentence for each mistake in it."""

    server: McpServerSettings = field(default_factory=McpServerSettings)
    servers: dict[str, McpServerEntry] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    limits: McpLimits = field(default_factory=McpLimits)


def parse_mcp_settings(data: dict[str, Any], where: str) -> McpSettings:
    """The [mcp] table of a parsed config.toml."""
    table = data.get("mcp", {})
    if not isinstance(table, dict):
        return McpSettings(problems=(f"{where}: [mcp] must be a table.",))
    problems: list[str] = []
    own = {k: v for k, v in table.items() if k not in SUBTABLES}
    limits, more = parse_table(McpLimits, own, f"{where}: [mcp]")
    problems += [p.replace("known keys: ", "known keys: server, servers, ", 1) for p in more]
    server, more = parse_table(McpServerSettings, table.get("server", {}), f"{where}: [mcp.server]")
    problems += more
    servers: dict[str, McpServerEntry] = {}
    declared = table.get("servers", {})
    if not isinstance(declared, dict):
        problems.append(f"{where}: [mcp.servers] must be a table of servers.")
        declared = {}
    for name, raw in declared.items():
        head = f"{where}: [mcp.servers.{clean_text(str(name))}]"
        entry, more = parse_table(McpServerEntry, raw, head)
        problems += more
        if entry is None:
            continue
        if (entry.command is None) == (entry.url is None):
            problems.append(f"{head} needs either a command or a url (one of them, not both).")
            continue
        servers[name] = entry
    return McpSettings(
        server or McpServerSettings(), servers, tuple(problems), limits or McpLimits()
    )


def mcp_settings(config_path: Path) -> McpSettings:
    """[mcp] of the config file at `config_path` (defaults when it is missing)."""
    from app.config_file import read_toml

    data, problems, _ = read_toml(config_path)
    parsed = parse_mcp_settings(data, str(config_path))
    return McpSettings(parsed.server, parsed.servers, (*problems, *parsed.problems), parsed.limits)
