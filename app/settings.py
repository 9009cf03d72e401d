"""config.toml as the app sees it: found and read once, every table validated, and
comment-keeping writes.

The file is parsed once per start; each layer validates its own tables with its own schema
(catalog: gateways, models, transport; memory: memory) and this module owns [app] and the
top level. A problem is a sentence naming the key; the app still starts, with defaults
where the file was wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from app.config_file import read_toml
from app.mcp_settings import McpSettings, parse_mcp_settings
from catalog import DEFAULT_CHAT_MODEL
from catalog.config import CONFIG_FILE, CatalogConfig, parse_catalog_config, parse_table
from catalog.schema import STRICT, AfterValidator, Field, with_config
from memory.data.files import atomic_write, ensure_dir
from memory.settings import MemorySettings, parse_memory_settings

if TYPE_CHECKING:
    from catalog import Catalog
    from catalog.chains import ChainPlan

DEFAULT_THEME = "kept-dark"


def config_dir() -> Path:
    """Kept's config folder: KEPT_CONFIG_DIR, else the platform's user config dir."""
    override = os.environ.get("KEPT_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("kept", appauthor=False))


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def _named(value: str) -> str:
    if not value.strip():
        raise ValueError("empty")
    return value.strip()


Name = Annotated[str, Field(strict=True, description="a non-empty string"), AfterValidator(_named)]


@with_config(STRICT)
@dataclass(frozen=True)
class AppSettings:
    model: Name = DEFAULT_CHAT_MODEL
    theme: Name = DEFAULT_THEME


@with_config(STRICT)
@dataclass(frozen=True)
class TopLevel:
    """The file's tables; each is validated by the layer that owns it."""

    app: object = None
    gateways: object = None
    models: object = None
    transport: object = None
    memory: object = None
    attachments: object = None  # memory.settings.AttachmentLimits
    mcp: object = None  # app.mcp_settings


@dataclass(frozen=True)
class Settings:
    app: AppSettings
    memory: MemorySettings
    problems: tuple[str, ...]  # every problem in the file, the catalog's included
    catalog: CatalogConfig = field(default_factory=CatalogConfig)
    mcp: McpSettings = field(default_factory=McpSettings)


def parse_app_settings(data: dict[str, Any], where: str) -> tuple[AppSettings, list[str]]:
    """[app], and the top level's unknown tables or keys."""
    # Only an unknown table or key is the top level's to name (each known table is checked
    # by its layer): with none, its validator is not built.
    problems: list[str] = []
    if data.keys() - {f.name for f in fields(TopLevel)}:
        _, problems = parse_table(TopLevel, data, f"{where}: the file")
    app, more = parse_table(AppSettings, data.get("app", {}), f"{where}: [app]")
    return app or AppSettings(), problems + more


def load_settings(path: Path | None = None) -> Settings:
    """Every layer's settings from one read and one parse of config.toml."""
    path = path or config_path()
    data, problems, unparsed = read_toml(path)
    where = str(path)
    app, app_problems = parse_app_settings(data, where)
    memory, memory_problems = parse_memory_settings(data, where)
    parsed = parse_catalog_config(data, where, unparsed)
    mcp = parse_mcp_settings(data, where)
    catalog = CatalogConfig(
        parsed.gateway_urls,
        parsed.user_models,
        parsed.transport,
        (*problems, *parsed.problems),
        parsed.broken_gateways,
    )
    every = (*problems, *app_problems, *memory_problems, *parsed.problems, *mcp.problems)
    return Settings(app, memory, every, catalog, mcp)


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
    """Point the local gateway at a server and add one model of the user's on it, or give
    the one already there its new context window."""
    import tomlkit

    path = path or config_path()
    save_setting("gateways", "local", {"base_url": base_url}, path)
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    models = document.get("models")
    if models is None:
        models = tomlkit.aot()
        document["models"] = models
    entry = next((m for m in models if m.get("id") == model_id), None)
    if entry is None:
        entry = tomlkit.table()
        entry["id"] = model_id
        entry["gateway"] = "local"
        models.append(entry)
    if context_window:
        entry["context_window"] = context_window
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
