"""CLI verbs start fast: litellm is imported only when a request will be sent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fakes.provider import FakeProvider
from tests.support import SAMPLE_MESSAGES, gateways_toml, subprocess_env

ROOT = Path(__file__).parents[2]
CHILD = """
import sys
from app.cli.main import main
for argv in {argvs!r}:
    main(argv)
    print(" ".join(argv[:2]), "litellm" in sys.modules, file=sys.stderr)
"""


def run_verbs(tmp_path: Path, argvs: list[list[str]], **env: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(argvs=argvs)],
        cwd=ROOT,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return [line for line in done.stderr.splitlines() if line.endswith(("True", "False"))]


def test_verbs_that_send_nothing_never_import_litellm(tmp_path: Path) -> None:
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("".join(json.dumps(m) + "\n" for m in SAMPLE_MESSAGES))
    verbs = [
        ["log"],
        ["memory", "show"],
        ["memory", "versions"],
        ["memory", "grep", "Ana"],
        ["import", str(transcript)],
        ["log"],
        # a pending session, but no model has a key: no request will be sent
        ["consolidate"],
        # no model can be asked: said at once, with no walk, no retries and no backoff
        ["ask", "hello"],
    ]
    lines = run_verbs(tmp_path, verbs)
    assert lines == [f"{' '.join(v[:2])} False" for v in verbs]


def test_a_verb_that_sends_a_request_imports_it(tmp_path: Path, fake: FakeProvider) -> None:
    from tests.fakes.provider import tool_call
    from tests.support import fake_keys, save_args

    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(gateways_toml(fake))
    fake.default = tool_call("save_memory", save_args())
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("".join(json.dumps(m) + "\n" for m in SAMPLE_MESSAGES))
    lines = run_verbs(
        tmp_path,
        [["import", str(transcript)], ["consolidate"]],
        KEPT_CONFIG_DIR=str(config),
        **fake_keys(),
    )
    assert lines == ["import " + str(transcript) + " False", "consolidate True"]
    assert fake.count() == 1


def test_a_command_reads_no_package_metadata_unless_version_is_asked() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom app.cli.main import main\nmain(['memory', 'path'])\n"
        "print('importlib.metadata' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "False"
