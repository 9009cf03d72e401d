"""This machine's device id: the name of the files only this machine writes.

A data folder carried by git or a file-sync tool is written by several machines; each writes
its sessions, versions and log under its own device id, so no two machines ever write the
same file there (memory.data.layout). The id is kept outside the data folder, in the
machine's state folder (KEPT_STATE_DIR, else the platform's user state dir), so that a sync
tool copying the folder never copies it. KEPT_DEVICE names it instead, for a test or for a
user who wants a name of their own.

An id is lower-case letters, digits and dashes: the host's name and four random hex digits
("laptop-3f2a"), made once, then read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

DEVICE_ENV = "KEPT_DEVICE"
STATE_ENV = "KEPT_STATE_DIR"
_VALID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")


def valid_device(name: str) -> bool:
    return bool(_VALID.match(name))


def state_dir() -> Path:
    """The machine's own folder for Kept: KEPT_STATE_DIR, else the user state dir."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("kept", appauthor=False))


def _fresh() -> str:
    import secrets
    import socket

    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-")[:24]
    return f"{host or 'device'}-{secrets.token_hex(2)}"


def this_device() -> str:
    """This machine's id: KEPT_DEVICE, else the one in the state folder, made there the
    first time (two processes making it at once agree on the one written first)."""
    named = os.environ.get(DEVICE_ENV, "").strip().lower()
    if named:
        if not valid_device(named):
            raise ValueError(
                f"{DEVICE_ENV}={named!r} is not a device name Kept can use: use lower-case "
                "letters, digits and dashes, 40 at most."
            )
        return named
    path = state_dir() / "device"
    try:
        found = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        found = ""
    if valid_device(found):
        return found
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = _fresh()
    temp = path.with_name(f".device.{os.getpid()}.tmp")
    temp.write_text(fresh + "\n", encoding="utf-8")
    try:
        if found:  # a damaged id is replaced
            os.replace(temp, path)
        else:
            os.link(temp, path)  # fails if another process wrote one first
    except FileExistsError:
        pass
    finally:
        temp.unlink(missing_ok=True)
    kept = path.read_text(encoding="utf-8").strip()
    return kept if valid_device(kept) else fresh
