"""The [mcp] table: [mcp.server] and [mcp.servers.NAME], each mistake one sentence."""

from __future__ import annotations

from pathlib import Path

from app.mcp_settings import McpServerEntry, McpServerSettings, mcp_settings


def test_defaults_when_the_file_is_missing(tmp_path: Path) -> None:
    settings = mcp_settings(tmp_path / "config.toml")
    assert settings.server == McpServerSettings(allow_writes=True)
    assert settings.servers == {}
    assert settings.problems == ()


def test_a_bad_entry_is_a_sentence_and_costs_no_other(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[mcp.server]\nallow_writes = "no"\n'
        '[mcp.servers.fs]\ncommand = "npx"\nargs = ["-y", "x"]\nenabled = true\n'
        '[mcp.servers.web]\nurl = "http://127.0.0.1:9/mcp"\nheaders = {A = "b"}\n'
        '[mcp.servers.both]\ncommand = "a"\nurl = "http://x"\n'
        "[mcp.servers.worse]\nargs = 3\n",
        encoding="utf-8",
    )
    settings = mcp_settings(path)
    assert settings.server.allow_writes is True  # the default stands in
    assert settings.servers == {
        "fs": McpServerEntry(command="npx", args=["-y", "x"], enabled=True),
        "web": McpServerEntry(url="http://127.0.0.1:9/mcp", headers={"A": "b"}),
    }
    assert f"{path}: [mcp.server] allow_writes must be true or false, not 'no'." in (
        settings.problems
    )
    assert any("[mcp.servers.both] needs either a command or a url" in p for p in settings.problems)
    assert any("[mcp.servers.worse] args must be a list of strings" in p for p in settings.problems)


def test_writes_switched_off(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[mcp.server]\nallow_writes = false\n", encoding="utf-8")
    assert mcp_settings(path).server.allow_writes is False


def test_the_app_knows_the_mcp_table_and_reports_its_mistakes(tmp_path: Path) -> None:
    from app.settings import load_settings

    path = tmp_path / "config.toml"
    path.write_text("[mcp.server]\nallow_writes = false\nwrites = 1\n", encoding="utf-8")
    settings = load_settings(path)
    assert settings.mcp.server.allow_writes is False
    assert settings.problems == (
        f"{path}: [mcp.server] has an unknown key 'writes'; known keys: allow_writes.",
    )


def test_the_tool_budget_and_deadlines_are_read_and_bounded(tmp_path: Path) -> None:
    from app.mcp_tools import toolbox_for

    path = tmp_path / "config.toml"
    path.write_text("[mcp]\nmax_tool_tokens = 2000\ncall_timeout = 5\n", encoding="utf-8")
    settings = mcp_settings(path)
    assert settings.problems == ()
    box = toolbox_for(settings, tmp_path, tmp_path)
    assert (box.max_tool_tokens, box.call_timeout, box.start_timeout) == (2000, 5, 30)
    path.write_text("[mcp]\nmax_tool_tokens = 0\ntokens = 1\n", encoding="utf-8")
    problems = mcp_settings(path).problems
    assert any("[mcp] max_tool_tokens must be" in p for p in problems), problems
    assert any(
        "unknown key 'tokens'; known keys: server, servers, max_tool_tokens" in p for p in problems
    ), problems
    assert mcp_settings(path).limits.max_tool_tokens == 8000  # the default stands in
