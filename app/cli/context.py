"""What the verbs share: settings, catalog and store, built once in `main` and each loaded
when a verb first asks for it (`kept memory path` reads no catalog; `kept models` opens no
store), so a verb costs what it uses."""

from __future__ import annotations

import sys
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from app.settings import Settings
    from catalog import Catalog
    from memory import MemoryStore


class Context:
    """The verbs' shared parts, loaded lazily; `checked()` also says config problems once."""

    def __init__(self) -> None:
        self._warned = False

    @cached_property
    def settings(self) -> Settings:
        from app.settings import load_settings

        return load_settings()

    @cached_property
    def catalog(self) -> Catalog:
        from catalog import load_catalog

        return load_catalog(self.settings.catalog)

    @cached_property
    def store(self) -> MemoryStore:
        from memory import MemoryStore

        return MemoryStore(settings=self.settings.memory)

    @property
    def data_dir(self) -> Path:
        """The data folder, without reading config.toml or opening the store."""
        from memory.data.files import data_dir

        return data_dir()

    def checked(self) -> tuple[Catalog, MemoryStore, Settings]:
        """The catalog, store and settings, with config.toml's problems printed once as
        warnings (a verb that sends requests should not go on silently past them)."""
        if not self._warned:
            self._warned = True
            for problem in dict.fromkeys((*self.catalog.problems, *self.settings.problems)):
                print(f"warning: {problem}", file=sys.stderr)
        return self.catalog, self.store, self.settings
