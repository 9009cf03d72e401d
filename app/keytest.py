"""Trying a key before it is kept: the app's catalog and retry policy handed to
catalog.probe.try_key, which decides; screens only say what it found."""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog import Gateway
from catalog.probe import try_key as try_catalog_key

if TYPE_CHECKING:
    from app.main import KeptApp


async def try_key(app: KeptApp, gateway: Gateway, value: str | None = None) -> str:
    """ "" when the gateway answers with `value` (or its current key), else why not."""
    return await try_catalog_key(app.catalog, gateway, value, app.policy)
