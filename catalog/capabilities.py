"""What a model can take besides text: images, and tools. A hosted model: litellm's map
says for images, and every hosted model takes tools. A local model: only what its server
says (llama.cpp's GET /props, Ollama's POST /api/show), asked once per process, since a
server that cannot would fail on the request, or answer without the image, or write the
tool call out as text."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from catalog.catalog import Catalog
from catalog.models import ModelEntry

Ability = Literal["vision", "tools"]  # also the names Ollama lists in its capabilities


def _props_vision(props: dict[str, Any]) -> bool | None:
    modalities = props.get("modalities")
    return modalities.get("vision") is True if isinstance(modalities, dict) else None


def _props_tools(props: dict[str, Any]) -> bool | None:
    caps = props.get("chat_template_caps")
    if not isinstance(caps, dict):
        return None
    return caps.get("supports_tool_calls") is True or caps.get("supports_tools") is True


# What llama-server's /props says of each ability (None: it does not say).
_PROPS: dict[Ability, Callable[[dict[str, Any]], bool | None]] = {
    "vision": _props_vision,
    "tools": _props_tools,
}

# What local servers said in this process: (api_base, model id, ability) -> it can.
_said: dict[tuple[str | None, str, Ability], bool] = {}


def local_can(
    catalog: Catalog, entry: ModelEntry, ability: Ability, *, ask_server: bool = True
) -> bool:
    """What a local model's server said of `ability` (asked once per process, unless not
    `ask_server`); False when it said nothing."""
    route = catalog.route(entry)
    key = (route.api_base, entry.id, ability)
    if key not in _said and ask_server and route.api_base:
        _said[key] = server_says(route.api_base, entry.provider_model, ability)
    return _said.get(key, False)


def sees_images(catalog: Catalog, entry: ModelEntry, *, ask_server: bool = True) -> bool:
    """Whether `entry` takes image parts. A hosted model: litellm's map says (litellm is
    imported if it was not). A keyless (local) model: only when its server says so."""
    route = catalog.route(entry)
    if not route.gateway.needs_key:
        return local_can(catalog, entry, "vision", ask_server=ask_server)
    from catalog.llm import litellm

    try:
        return bool(litellm().supports_vision(model=route.litellm_model))
    except Exception:  # a model litellm's map lacks: it cannot be assumed to see
        return False


def takes_tools(catalog: Catalog, model: str, *, ask_server: bool = True) -> bool:
    """Whether `model` may be sent tools: a hosted one may; a local one when its server
    says it takes tool calls."""
    if model not in catalog:
        return False
    entry = catalog.get(model)
    if catalog.route(entry).gateway.needs_key:
        return True
    return local_can(catalog, entry, "tools", ask_server=ask_server)


def server_says(api_base: str, model: str, ability: Ability, timeout: float = 2.0) -> bool:
    """What a local server says of `model`: llama.cpp's GET /props (modalities, the chat
    template's capabilities), else Ollama's POST /api/show capabilities. False when it says
    nothing or cannot be reached."""
    root = api_base.rstrip("/").removesuffix("/v1")
    try:
        props = _json(f"{root}/props", timeout)
        said = _PROPS[ability](props) if isinstance(props, dict) else None
        if said is not None:
            return said
    except (OSError, ValueError):
        pass
    try:
        shown = _json(f"{root}/api/show", timeout, {"model": model, "name": model})
    except (OSError, ValueError):
        return False
    capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
    return isinstance(capabilities, list) and ability in capabilities


def _json(url: str, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON at `url`: GET, or POST when there is a `body`."""
    import urllib.request  # only when a local server is asked (not before the first frame)

    data = json.dumps(body).encode() if body is not None else None
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data, headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read(4_000_000) or b"null")
