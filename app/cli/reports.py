"""`--json FILE` of the commands that measure: the whole report, as JSON, on disk."""

from __future__ import annotations

from typing import Any

from app.cli.errors import USAGE, CliError, os_error


def write_report(path: str, report: dict[str, Any], name: str) -> None:
    """`--json FILE`: the whole report, written atomically; one sentence when it cannot be."""
    import json
    from pathlib import Path

    from memory.data.files import atomic_write

    text = json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    try:
        atomic_write(Path(path), text)
    except OSError as exc:
        raise CliError(
            f"{name}: the report could not be written: {os_error(exc)}.", USAGE
        ) from None
