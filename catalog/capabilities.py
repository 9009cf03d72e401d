"""What a model can take besides text: images, as litellm knows for hosted models and as a
local server says for its own."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from catalog.catalog import Catalog
from catalog.models import ModelEntry

# What local servers said of their models in this process: (api_base, model id) -> sees.
_said_vision: dict[tuple[str | None, str], bool] = {}


def sees_images(catalog: Catalog, entry: ModelEntry, *, ask_server: bool = True) -> bool:
    """Whether `entry` takes image parts. A hosted model: litellm's map says (litellm is
    imported if it was not). A keyless (local) model: only when its server says so (asked
    once per process, unless not `ask_server`), since a server that cannot see an image
    fails or, worse, answers without it."""
    route = catalog.route(entry)
    if not route.gateway.needs_key:
        key = (route.api_base, entry.id)
        if key not in _said_vision and ask_server and route.api_base:
            _said_vision[key] = server_says_vision(route.api_base, entry.provider_model)
        return _said_vision.get(key, False)
    from catalog.llm import litellm

    try:
        return bool(litellm().supports_vision(model=route.litellm_model))
    except Exception:  # a model litellm's map lacks: it cannot be assumed to see
        return False


def server_says_vision(api_base: str, model: str, timeout: float = 2.0) -> bool:
    """What a local server says of `model`: llama.cpp's GET /props names its modalities,
    Ollama's POST /api/show its capabilities. False when it says nothing or cannot be
    reached."""
    root = api_base.rstrip("/").removesuffix("/v1")
    try:
        props = _json(f"{root}/props", timeout)
        modalities = props.get("modalities") if isinstance(props, dict) else None
        if isinstance(modalities, dict):
            return modalities.get("vision") is True
    except (OSError, ValueError):
        pass
    try:
        shown = _json(f"{root}/api/show", timeout, {"model": model, "name": model})
    except (OSError, ValueError):
        return False
    capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
    return isinstance(capabilities, list) and "vision" in capabilities


def _json(url: str, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON at `url`: GET, or POST when there is a `body`."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data, headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read(4_000_000) or b"null")
