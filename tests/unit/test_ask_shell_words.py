"""`kept ask` says the shell's next step, never the chat's slash commands."""

from __future__ import annotations

import pytest

from app.cli.main import main
from tests.fakes.provider import FakeProvider, http_error
from tests.support import configure_fake


def test_a_refused_key_is_told_with_the_command_that_stores_one(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_fake(fake, monkeypatch, '[app]\nmodel = "gpt-4.1-mini"\n')
    fake.default = http_error(401)
    assert main(["ask", "hello"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "key was refused" in err and "`keyring set kept " in err, err
    assert "/keys" not in err and "/model" not in err and "Traceback" not in err
