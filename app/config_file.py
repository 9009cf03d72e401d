"""config.toml read as a file: its tables, or the one sentence saying why they could not be
read. Its own module so that each table's parser (app.settings, app.mcp_settings) can read
the file without importing the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def read_toml(path: Path) -> tuple[dict[str, Any], list[str], str | None]:
    """The parsed file (empty when missing), any problem reading it, and its text when it
    was read but does not parse (the catalog distrusts the gateways it names)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, [], None
    except OSError as exc:
        return {}, [f"{path} could not be read ({exc.strerror}); using the defaults."], None
    import tomllib  # only when there is a file: not loaded before the first frame otherwise

    text = raw.decode("utf-8", errors="replace")
    try:
        return tomllib.loads(raw.decode("utf-8")), [], None
    except UnicodeDecodeError:
        return {}, [f"{path} is not UTF-8 text; save it as UTF-8. Using the defaults."], text
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"{path} is not valid TOML ({exc}); fix it. Using the defaults."], text
    except RecursionError:
        problem = f"{path} nests arrays or tables too deeply to read; fix it. Using the defaults."
        return {}, [problem], text
