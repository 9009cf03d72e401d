"""config.toml as the app sees it: strict validation of every table, comment-keeping writes.

Each layer validates its own tables (catalog: gateways, models, transport; memory: memory);
this module owns [app] and rejects unknown top-level keys. A problem is a sentence naming
the key; the app still starts, with defaults where the file was wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog import DEFAULT_CHAT_MODEL, config_path
from catalog.config import read_toml
from memory.files import atomic_write, ensure_dir
from memory.settings import MemorySettings, parse_memory_settings

if TYPE_CHECKING:
    from catalog import Catalog
    from catalog.chains import ChainPlan

TOP_LEVEL = ("app", "gateways", "models", "transport", "memory")
APP_KEYS = {"model": str, "theme": str}
DEFAULT_THEME = "kept-dark"


@dataclass(frozen=True)
class AppSettings:
    model: str = DEFAULT_CHAT_MODEL
    theme: str = DEFAULT_THEME


@dataclass(frozen=True)
class Settings:
    app: AppSettings
    memory: MemorySettings
    problems: tuple[str, ...]


def parse_app_settings(data: dict[str, Any], where: str) -> tuple[AppSettings, list[str]]:
    problems = [
        f"{where}: unknown table or key '{key}'; known: {', '.join(TOP_LEVEL)}."
        for key in data
        if key not in TOP_LEVEL
    ]
    table = data.get("app", {})
    if not isinstance(table, dict):
        return AppSettings(), [*problems, f"{where}: 'app' must be a table ([app])."]
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in APP_KEYS:
            problems.append(
                f"{where}: [app] has an unknown key '{key}'; known keys: {', '.join(APP_KEYS)}."
            )
        elif not isinstance(value, APP_KEYS[key]) or not str(value).strip():
            problems.append(f"{where}: [app] {key} must be a non-empty string, not {value!r}.")
        else:
            values[key] = value.strip()
    return replace(AppSettings(), **values), problems


def load_settings(path: Path | None = None) -> Settings:
    """The app's and memory's settings, with every problem in the file (catalog's included
    when the catalog is loaded from the same file)."""
    path = path or config_path()
    data, problems = read_toml(path)
    app, app_problems = parse_app_settings(data, str(path))
    memory, memory_problems = parse_memory_settings(data, str(path))
    return Settings(app, memory, tuple(problems + app_problems + memory_problems))


def save_setting(table: str, key: str, value: Any, path: Path | None = None) -> None:
    """Set one value in config.toml, keeping the user's comments and layout."""
    import tomlkit

    path = path or config_path()
    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        document = tomlkit.document()
    except Exception as exc:  # a broken file is the user's: never overwrite it
        raise ValueError(
            f"{path} could not be updated because it does not parse ({exc}); fix it first."
        ) from None
    if table not in document:
        document[table] = tomlkit.table()
    document[table][key] = value
    ensure_dir(path.parent)
    atomic_write(path, tomlkit.dumps(document), follow=True)  # a dotfiles link stays a link


def add_local_model(
    model_id: str, base_url: str, path: Path | None = None, context_window: int | None = None
) -> None:
    """Point the local gateway at a server and add one model of the user's on it."""
    import tomlkit

    path = path or config_path()
    save_setting("gateways", "local", {"base_url": base_url}, path)
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    models = document.get("models")
    if models is None:
        models = tomlkit.aot()
        document["models"] = models
    if not any(m.get("id") == model_id for m in models):
        entry = tomlkit.table()
        entry["id"] = model_id
        entry["gateway"] = "local"
        if context_window:
            entry["context_window"] = context_window
        models.append(entry)
    atomic_write(path, tomlkit.dumps(document), follow=True)


def consolidation_plan_of(
    catalog: Catalog, settings: Settings, *, check: bool
) -> tuple[ChainPlan | None, str]:
    """The effective consolidation chain for these settings (its local servers asked
    whether they answer when `check`), or None and the sentence that says what is wrong."""
    from catalog import UnknownModelError
    from catalog.chains import check_servers, consolidation_plan

    chosen = settings.memory.consolidation_model or None
    try:
        plan = consolidation_plan(catalog, chosen, settings.app.model)
    except UnknownModelError as exc:
        return None, f"[memory] consolidation_model: {exc}"
    return (check_servers(catalog, plan) if check else plan), ""
