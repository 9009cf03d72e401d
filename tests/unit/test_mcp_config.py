"""Tool servers in config: mcp.json's `mcpServers` shape beside config.toml, config.toml
winning; /tools' and the consent prompt's choices written back, comments kept."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from app.mcp_settings import McpSettings, mcp_settings
from app.mcp_tools import declared_servers, read_mcp_json, save_server, spec_of, toolbox_for
from catalog.mcp import ServerSpec


def test_mcp_json_servers_are_read_and_config_toml_wins(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}},
                    "web": {"type": "http", "url": "https://x.example/mcp"},
                    "both": {"command": "a", "url": "http://b"},
                    "odd": 3,
                }
            }
        )
    )
    (tmp_path / "config.toml").write_text('[mcp.servers.fs]\ncommand = "mine"\nenabled = true\n')
    servers, problems = declared_servers(mcp_settings(tmp_path / "config.toml"), tmp_path)
    assert servers["fs"].command == "mine" and servers["fs"].enabled
    assert servers["web"].url == "https://x.example/mcp" and not servers["web"].enabled
    assert set(servers) == {"fs", "web"}
    assert len(problems) == 2 and all("\n" not in p for p in problems)
    box = toolbox_for(McpSettings(servers=dict(servers)), tmp_path, tmp_path / "data")
    assert list(box.servers) == ["fs", "web"]
    assert box.servers["fs"].spec.enabled and not box.servers["web"].spec.enabled


def test_a_broken_mcp_json_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{nope")
    servers, problems = read_mcp_json(path)
    assert servers == {} and len(problems) == 1 and "could not be read" in problems[0]


def test_choices_are_written_back_keeping_comments(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '# my settings\n[app]\nmodel = "gpt-4.1-mini"  # the one I like\n\n'
        '[mcp.servers.fs]\n# files\ncommand = "npx"\n'
    )
    fs = ServerSpec("fs", command="npx")
    save_server(config, fs, enabled=True)
    save_server(config, fs, allow="read")
    save_server(config, fs, allow="list")
    save_server(config, fs, allow="read")
    pasted = ServerSpec("web", url="https://x.example/mcp", headers={"Authorization": "t"})
    save_server(config, pasted, enabled=True)  # only mcp.json had it: written whole
    text = config.read_text()
    assert "# my settings" in text and "# the one I like" in text and "# files" in text
    data = tomllib.loads(text)
    assert data["mcp"]["servers"]["fs"] == {
        "command": "npx",
        "enabled": True,
        "allowed_tools": ["read", "list"],
    }
    assert data["mcp"]["servers"]["web"]["url"] == "https://x.example/mcp"
    settings = mcp_settings(config)
    assert settings.problems == ()
    assert spec_of("fs", settings.servers["fs"]).allowed_tools == ("read", "list")
