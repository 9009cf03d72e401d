"""A key set in the app lands in a real Secret Service (gnome-keyring), and nowhere else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.provider import FakeProvider

TOOLS = ("dbus-run-session", "gnome-keyring-daemon")
ROOT = Path(__file__).parents[2]

if any(shutil.which(t) is None for t in TOOLS):
    if os.environ.get("CI"):
        raise RuntimeError("gnome-keyring and dbus are missing: .ci/run installs them")
    pytest.skip("gnome-keyring or dbus-run-session is not installed", allow_module_level=True)


def in_keyring_session(tmp_path: Path, *commands: list[str]) -> list[str]:
    """Run each command, one after another, in one D-Bus session with an unlocked keyring."""
    script = [
        "echo -n kept-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1"
    ]
    for index, command in enumerate(commands):
        script.append(" ".join(f"'{part}'" for part in command) + f" > out{index}.txt")
    home = tmp_path / "home"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "KEPT_DATA_DIR": os.environ["KEPT_DATA_DIR"],
        "KEPT_CONFIG_DIR": os.environ["KEPT_CONFIG_DIR"],
        "KEPT_DEVICE": os.environ["KEPT_DEVICE"],
        "PYTHONPATH": str(ROOT),
    }
    (tmp_path / "run").mkdir(mode=0o700)
    home.mkdir()
    subprocess.run(
        ["dbus-run-session", "--", "sh", "-ec", "; ".join(script)],
        env=env,
        cwd=tmp_path,
        check=True,
        timeout=180,
    )
    return [(tmp_path / f"out{i}.txt").read_text() for i in range(len(commands))]


def test_a_key_set_in_the_app_is_read_back_from_the_secret_service(
    tmp_path: Path, fake: FakeProvider
) -> None:
    secret = "gsk-real-secret-service-4242"
    # Kept tests a key before it stores it: Groq's endpoint is the loopback fake here.
    config = Path(os.environ["KEPT_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[gateways.groq]\nbase_url = "{fake.base_url("groq")}"\n')
    child = str(ROOT / "tests" / "secret_service_child.py")
    set_out, get_out = in_keyring_session(
        tmp_path, [sys.executable, child, "set", secret], [sys.executable, child, "get"]
    )
    assert "Saved the Groq key in the OS keyring." in set_out
    (test,) = [r for r in fake.requests if r.gateway == "groq"]
    assert test.headers["authorization"] == f"Bearer {secret}"
    backend, value = get_out.split()
    assert backend == "keyring.backends.SecretService"
    assert value == secret
    for folder in (Path(os.environ["KEPT_DATA_DIR"]), Path(os.environ["KEPT_CONFIG_DIR"])):
        for path in folder.rglob("*") if folder.exists() else ():
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
