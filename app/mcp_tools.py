"""The chat's tool servers as config declares them: [mcp.servers.NAME] in config.toml, and
the common `mcpServers` JSON shape in mcp.json beside it (paste what another tool uses).
config.toml wins for a name declared in both; every server is off until enabled there.
Choices made in /tools or at a tool's consent prompt are written back to config.toml,
keeping the user's comments."""

from __future__ import annotations

import json
from pathlib import Path

from app.mcp_settings import McpServerEntry, McpSettings, parse_mcp_settings
from catalog.mcp import ServerSpec, ToolBox
from catalog.sanitize import clean_text
from memory.data.files import atomic_write, ensure_dir

MCP_JSON = "mcp.json"


def read_mcp_json(path: Path) -> tuple[dict[str, McpServerEntry], list[str]]:
    """The servers of an `{"mcpServers": {NAME: {command, args, env} | {url, headers}}}`
    file (missing: none), and a sentence for each one that cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, ValueError) as exc:
        return {}, [f"{path} could not be read ({clean_text(str(exc))}); its servers are left out."]
    declared = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(declared, dict):
        return {}, [f'{path} has no "mcpServers" object; its servers are left out.']
    entries: dict[str, McpServerEntry] = {}
    problems: list[str] = []
    for name, raw in declared.items():
        if not isinstance(raw, dict):
            problems.append(f"{path}: server {clean_text(str(name))} is not an object.")
            continue
        known = {k: raw[k] for k in ("command", "args", "env", "url", "headers") if k in raw}
        # The shape's own markers of a transport ("type": "stdio" / "http") say nothing more.
        parsed = parse_mcp_settings({"mcp": {"servers": {name: known}}}, str(path))
        problems += parsed.problems
        entries.update(parsed.servers)
    return entries, problems


def declared_servers(
    settings: McpSettings, config_dir: Path
) -> tuple[dict[str, McpServerEntry], list[str]]:
    """config.toml's servers over mcp.json's; the problems of both."""
    imported, problems = read_mcp_json(config_dir / MCP_JSON)
    return {**imported, **settings.servers}, [*settings.problems, *problems]


def spec_of(name: str, entry: McpServerEntry) -> ServerSpec:
    return ServerSpec(
        name,
        command=entry.command,
        args=tuple(entry.args),
        env=dict(entry.env),
        url=entry.url,
        headers=dict(entry.headers),
        enabled=entry.enabled,
        allowed_tools=tuple(entry.allowed_tools),
    )


def toolbox_for(settings: McpSettings, config_dir: Path, data_dir: Path) -> ToolBox:
    """Every declared server (none started yet), its stderr logged in data_dir/mcp/."""
    servers, _ = declared_servers(settings, config_dir)
    return ToolBox(
        [spec_of(name, entry) for name, entry in servers.items()],
        logs=data_dir / "mcp",
        start_timeout=settings.limits.start_timeout,
        call_timeout=settings.limits.call_timeout,
        max_tool_tokens=settings.limits.max_tool_tokens,
    )


def save_server(
    config_path: Path, spec: ServerSpec, *, enabled: bool | None = None, allow: str = ""
) -> None:
    """Turn [mcp.servers.NAME] on or off, or add a tool to its allowed_tools, in config.toml,
    keeping comments and layout. A server only mcp.json declared is written whole, so
    config.toml alone says how to start it."""
    import tomlkit

    try:
        document = tomlkit.parse(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        document = tomlkit.document()
    except Exception as exc:  # a broken file is the user's: never overwrite it
        raise ValueError(
            f"{config_path} could not be updated because it does not parse ({exc}); fix it first."
        ) from None
    mcp = document.setdefault("mcp", tomlkit.table(is_super_table=True))
    servers = mcp.setdefault("servers", tomlkit.table(is_super_table=True))
    if spec.name not in servers:
        table = tomlkit.table()
        if spec.command is not None:
            table["command"] = spec.command
            if spec.args:
                table["args"] = list(spec.args)
            if spec.env:
                table["env"] = dict(spec.env)
        else:
            table["url"] = spec.url or ""
            if spec.headers:
                table["headers"] = dict(spec.headers)
        servers[spec.name] = table
    entry = servers[spec.name]
    if enabled is not None:
        entry["enabled"] = enabled
    if allow:
        allowed = [str(t) for t in entry.get("allowed_tools", [])]
        if allow not in allowed:
            entry["allowed_tools"] = [*allowed, allow]
    ensure_dir(config_path.parent)
    atomic_write(config_path, tomlkit.dumps(document), follow=True)
