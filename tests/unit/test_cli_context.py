"""The verbs share one Context built by main(), each part loaded when first asked for, and
fail by raising CliError, which main() says in one place: one sentence on stderr, and the
verb's exit code."""

from __future__ import annotations

import pytest

from app.cli.context import Context
from app.cli.errors import CliError
from app.cli.main import main


def test_a_context_loads_only_what_a_verb_asks_for() -> None:
    ctx = Context()
    assert ctx.store.memory_path.name == "MEMORY.md"
    loaded = set(vars(ctx))
    assert {"settings", "store"} <= loaded and "catalog" not in loaded
    assert ctx.store is ctx.store  # built once


def test_config_problems_are_said_once_however_often_a_verb_asks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.settings import config_path

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("[app]\nmodle = 1\n")
    ctx = Context()
    ctx.checked()
    ctx.checked()
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "modle" in warnings[0]


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (["import", "no-such-file.jsonl"], 2, "kept import: no file at no-such-file.jsonl."),
        (
            ["memory", "grep", "x", "--since", "May"],
            2,
            "kept memory grep: --since takes a date, YYYY-MM-DD (or YYYY-MM, YYYY), not 'May'",
        ),
        (["memory", "undo", "7"], 2, "kept memory undo: "),
        (
            ["memory", "review", "--accept", "nope"],
            2,
            "kept memory review: no change of session 'nope' waits for review; "
            "`kept memory review` lists them.",
        ),
        (["mcp", "--http", "0"], 2, "kept mcp: --http takes a port from 1 to 65535, not 0."),
        (["ask", "--private", "--continue", "hi"], 2, "kept ask: --private starts a session"),
    ],
)
def test_a_verb_that_cannot_go_on_says_one_sentence_and_exits_with_its_code(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int, said: str
) -> None:
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(said) and err.count("\n") == 1, err


def test_main_says_a_cli_error_once_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.cli import models

    def fails(args: object, ctx: Context) -> int:
        print("listed so far")
        raise CliError("kept models: it cannot be listed.", 3)

    monkeypatch.setattr(models, "cmd_models", fails)
    assert main(["models"]) == 3
    assert capsys.readouterr() == ("listed so far\n", "kept models: it cannot be listed.\n")
