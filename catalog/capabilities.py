"""What a model can take besides text: images, as litellm knows for hosted models and as a
local server says for its own."""

from __future__ import annotations

from catalog.catalog import Catalog
from catalog.models import ModelEntry

# What local servers said about their models in this process: (api_base, model id) -> sees.
_said_vision: dict[tuple[str | None, str], bool] = {}


def learn_vision(api_base: str | None, model_id: str, sees: bool) -> None:
    """Record what a local server said: whether `model_id` there takes image parts."""
    _said_vision[(api_base, model_id)] = sees


def sees_images(catalog: Catalog, entry: ModelEntry) -> bool:
    """Whether `entry` takes image parts. A hosted model: litellm's map says (litellm is
    imported if it was not). A keyless (local) model: only when its server said so, since a
    server that cannot see an image fails or, worse, answers without it."""
    route = catalog.route(entry)
    if not route.gateway.needs_key:
        return _said_vision.get((route.api_base, entry.id), False)
    from catalog.llm import litellm

    try:
        return bool(litellm().supports_vision(model=route.litellm_model))
    except Exception:  # a model litellm's map lacks: it cannot be assumed to see
        return False
