"""The catalog's part of config.toml: gateway URLs, the user's own models, retry policy.

Problems are returned as sentences, never raised: a bad setting is reported and the
built-in default stands in for it, so Kept always starts.
"""

from __future__ import annotations

import contextlib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from catalog.gateways import GATEWAYS, Protocol
from catalog.models import ModelEntry
from catalog.sanitize import clean_text

CONFIG_FILE = "config.toml"
DEFAULT_WINDOW = 8192  # tokens, for a user's model whose window config.toml does not give


def config_dir() -> Path:
    """Kept's config folder: KEPT_CONFIG_DIR, else the platform's user config dir."""
    override = os.environ.get("KEPT_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("kept", appauthor=False))


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def read_toml(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The parsed file (empty when missing) and any problem reading it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"{path} could not be read ({exc.strerror}); using the defaults."]
    try:
        return tomllib.loads(raw.decode("utf-8")), []
    except UnicodeDecodeError:
        return {}, [f"{path} is not UTF-8 text; save it as UTF-8. Using the defaults."]
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"{path} is not valid TOML ({exc}); fix it. Using the defaults."]
    except RecursionError:
        return {}, [
            f"{path} nests arrays or tables too deeply to read; fix it. Using the defaults."
        ]


TRANSPORT_FIELDS: dict[str, tuple[type, float, float]] = {
    # name: (type, minimum, maximum)
    "retries": (int, 0, 10),
    "backoff": (float, 0.0, 60.0),
    "short_backoff": (float, 0.0, 60.0),
    "max_backoff": (float, 0.0, 600.0),
    "retry_after_cap": (float, 0.0, 600.0),
    "attempt_deadline": (float, 0.1, 3600.0),
    "stall_timeout": (float, 0.1, 3600.0),
}
GATEWAY_FIELDS = {"base_url"}
MODEL_FIELDS = {
    "id",
    "label",
    "api_model",
    "gateway",
    "fallback",
    "context_window",
    "tier",
    "description",
    "deadline",
    "structured_output",
}
# How a server takes a JSON schema for its reply (see catalog.structured); "off" calls tools.
STRUCTURED_OUTPUT = ("auto", "json_schema", "json_object", "off")


@dataclass(frozen=True)
class CatalogConfig:
    gateway_urls: dict[str, str] = field(default_factory=dict)
    user_models: tuple[ModelEntry, ...] = ()
    transport: dict[str, float | int] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    # Gateways whose [gateways.X] table is present but wrong: each unusable until fixed,
    # never silently sent to its public endpoint instead of the user's.
    broken_gateways: dict[str, str] = field(default_factory=dict)


def valid_url(value: object) -> bool:
    """An http(s) URL with a host, no credentials in it, no space or control character."""
    if (
        not isinstance(value, str)
        or clean_text(value) != value
        or any(ch.isspace() for ch in value)
    ):
        return False
    parsed = urlparse(value)
    return parsed.scheme in ("http", "https") and bool(parsed.hostname) and "@" not in parsed.netloc


def _broken(name: str, where: str) -> str:
    return (
        f"[gateways.{name}] in {where} is not valid, so Kept sends nothing through "
        f"{name} until it is fixed (it never falls back to the default endpoint)."
    )


_GATEWAY_MENTION = re.compile(r"\bgateways\b")


def mentioned_gateways(text: str) -> set[str]:
    """Gateways a file that does not parse seems to configure: those are not used."""
    if not _GATEWAY_MENTION.search(text):
        return set()
    return {name for name in GATEWAYS if re.search(rf"\b{re.escape(name)}\b", text)}


def parse_catalog_config(data: dict[str, Any], where: str = CONFIG_FILE) -> CatalogConfig:
    """Validate the [gateways.*], [[models]] and [transport] tables of a parsed config."""
    problems: list[str] = []
    urls: dict[str, str] = {}
    broken: dict[str, str] = {}
    gateways = data.get("gateways", {})
    if not isinstance(gateways, dict):
        problems.append(f"{where}: 'gateways' must be a table like [gateways.groq].")
        broken.update((name, _broken(name, where)) for name in GATEWAYS)
        gateways = {}
    for name, table in gateways.items():
        if name not in GATEWAYS:
            problems.append(
                f"{where}: [gateways.{name}] is not a gateway Kept knows; "
                f"use one of {', '.join(GATEWAYS)}."
            )
            continue
        before = len(problems)
        if not isinstance(table, dict):
            problems.append(f"{where}: [gateways.{name}] must be a table.")
            broken[name] = _broken(name, where)
            continue
        for key in sorted(set(table) - GATEWAY_FIELDS):
            problems.append(
                f"{where}: [gateways.{name}] has an unknown key '{key}'; the only key is base_url."
            )
        if "base_url" in table:
            if valid_url(table["base_url"]):
                urls[name] = table["base_url"].rstrip("/")
            else:
                problems.append(
                    f"{where}: [gateways.{name}] base_url must be an http:// or https:// URL "
                    "with no credentials, spaces or control characters in it, not "
                    f"{clean_text(repr(table['base_url']))}."
                )
        if len(problems) > before:
            broken[name] = _broken(name, where)
            urls.pop(name, None)

    models: list[ModelEntry] = []
    raw_models = data.get("models", [])
    if not isinstance(raw_models, list):
        problems.append(f"{where}: 'models' must be an array of tables ([[models]]).")
        raw_models = []
    for index, table in enumerate(raw_models, start=1):
        entry = _parse_model(table, index, where, problems)
        if entry is not None:
            models.append(entry)

    transport: dict[str, float | int] = {}
    raw_transport = data.get("transport", {})
    if not isinstance(raw_transport, dict):
        problems.append(f"{where}: 'transport' must be a table ([transport]).")
        raw_transport = {}
    for key, value in raw_transport.items():
        if key not in TRANSPORT_FIELDS:
            problems.append(
                f"{where}: [transport] has an unknown key '{key}'; "
                f"known keys: {', '.join(TRANSPORT_FIELDS)}."
            )
            continue
        kind, low, high = TRANSPORT_FIELDS[key]
        ok_type = isinstance(value, int | float) and not isinstance(value, bool)
        if kind is int:
            ok_type = isinstance(value, int) and not isinstance(value, bool)
        if not ok_type or not (low <= value <= high):
            noun = "whole number" if kind is int else "number"
            problems.append(
                f"{where}: [transport] {key} must be a {noun} "
                f"from {low:g} to {high:g}, not {value!r}."
            )
            continue
        transport[key] = kind(value)
    return CatalogConfig(urls, tuple(models), transport, tuple(problems), broken)


def _parse_model(table: object, index: int, where: str, problems: list[str]) -> ModelEntry | None:
    label = f"{where}: [[models]] #{index}"
    if not isinstance(table, dict):
        problems.append(f"{label} must be a table.")
        return None
    unknown = sorted(set(table) - MODEL_FIELDS)
    if unknown:
        problems.append(
            f"{label} has unknown keys {', '.join(unknown)}; "
            f"known keys: {', '.join(sorted(MODEL_FIELDS))}."
        )
        return None
    model_id = table.get("id")
    if not isinstance(model_id, str) or not model_id.strip():
        problems.append(f'{label} needs an id, such as id = "llama3.2".')
        return None
    if clean_text(model_id) != model_id:
        problems.append(
            f"{label} ({clean_text(model_id)!r}): an id cannot hold control "
            "characters or escape sequences."
        )
        return None
    gateway = table.get("gateway", "local")
    if gateway not in GATEWAYS or GATEWAYS[gateway].protocol is not Protocol.OPENAI:
        openai_like = [g.name for g in GATEWAYS.values() if g.protocol is Protocol.OPENAI]
        problems.append(
            f"{label} ({model_id}): gateway must be an OpenAI-compatible gateway "
            f"({', '.join(openai_like)}), not {gateway!r}."
        )
        return None
    for key in ("label", "api_model", "fallback", "tier", "description"):
        if key in table and not isinstance(table[key], str):
            problems.append(f"{label} ({model_id}): {key} must be a string.")
            return None
    window = table.get("context_window", DEFAULT_WINDOW)
    if not isinstance(window, int) or isinstance(window, bool) or window < 256:
        problems.append(
            f"{label} ({model_id}): context_window must be a whole number of tokens, at least 256."
        )
        return None
    deadline = table.get("deadline")
    if deadline is not None and (
        not isinstance(deadline, int | float)
        or isinstance(deadline, bool)
        or not 1 <= deadline <= 86_400
    ):
        problems.append(
            f"{label} ({model_id}): deadline must be a number of seconds from 1 "
            f"to 86400, not {deadline!r}."
        )
        return None
    keyless = not GATEWAYS[gateway].needs_key
    structured = table.get("structured_output", "auto" if keyless else "off")
    if structured not in STRUCTURED_OUTPUT:
        problems.append(
            f"{label} ({model_id}): structured_output must be one of "
            f"{', '.join(STRUCTURED_OUTPUT)}, not {structured!r}."
        )
        return None
    return replace(
        local_model(model_id, gateway, window),
        label=clean_text(table.get("label", model_id)),
        tier=clean_text(table.get("tier", "local")),
        description=clean_text(
            table.get("description", f"Your own model on the {gateway} gateway")
        ),
        fallback=table.get("fallback"),
        api_model=table.get("api_model"),
        structured_output=None if structured == "off" else structured,
        deadline=float(deadline) if deadline is not None else None,
    )


def local_model(model_id: str, gateway: str = "local", window: int | None = None) -> ModelEntry:
    """A model of the user's on an OpenAI-compatible gateway, with the defaults config.toml
    gives one: free, an 8,192-token window unless known, structured output on a keyless
    gateway."""
    return ModelEntry(
        id=model_id,
        label=model_id,
        tier="local",
        description=f"Your own model on the {gateway} gateway",
        gateway=gateway,
        context_window=window or DEFAULT_WINDOW,
        input_per_mtok=0.0,
        output_per_mtok=0.0,
        structured_output=None if GATEWAYS[gateway].needs_key else "auto",
        user=True,
    )


def load_catalog_config(path: Path | None = None) -> CatalogConfig:
    path = path or config_path()
    data, problems = read_toml(path)
    parsed = parse_catalog_config(data, where=str(path))
    broken = dict(parsed.broken_gateways)
    if problems:  # the file does not parse: the gateways it seems to move are not used
        with contextlib.suppress(OSError):
            text = path.read_bytes().decode("utf-8", errors="replace")
            broken.update(
                (name, _broken(name, str(path))) for name in sorted(mentioned_gateways(text))
            )
    return CatalogConfig(
        parsed.gateway_urls,
        parsed.user_models,
        parsed.transport,
        tuple(problems) + parsed.problems,
        broken,
    )
