"""Whether a model can be offered tools: a hosted model can; a local model only when its
server says it takes tool calls (llama.cpp's GET /props `chat_template_caps`, Ollama's
POST /api/show `capabilities`), since a server that cannot would fail on the request, or
answer with the call written out as text."""

from __future__ import annotations

from catalog.capabilities import _json
from catalog.catalog import Catalog

# What local servers said in this process: (api_base, model id) -> takes tools.
_said_tools: dict[tuple[str | None, str], bool] = {}


def takes_tools(catalog: Catalog, model: str, *, ask_server: bool = True) -> bool:
    """Whether `model` may be sent tools (a local server is asked once per process)."""
    if model not in catalog:
        return False
    entry = catalog.get(model)
    route = catalog.route(entry)
    if route.gateway.needs_key:
        return True
    key = (route.api_base, entry.id)
    if key not in _said_tools and ask_server and route.api_base:
        _said_tools[key] = server_says_tools(route.api_base, entry.provider_model)
    return _said_tools.get(key, False)


def server_says_tools(api_base: str, model: str, timeout: float = 2.0) -> bool:
    """What a local server says of tool calls; False when it says nothing or is away."""
    root = api_base.rstrip("/").removesuffix("/v1")
    try:
        props = _json(f"{root}/props", timeout)
        caps = props.get("chat_template_caps") if isinstance(props, dict) else None
        if isinstance(caps, dict):
            return caps.get("supports_tool_calls") is True or caps.get("supports_tools") is True
    except (OSError, ValueError):
        pass
    try:
        shown = _json(f"{root}/api/show", timeout, {"model": model, "name": model})
    except (OSError, ValueError):
        return False
    capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
    return isinstance(capabilities, list) and "tools" in capabilities


def tools_off_sentence(catalog: Catalog, model: str) -> str:
    label = catalog.get(model).label if model in catalog else model
    return (
        f"Tools are off for {label}: its server does not say it takes tool calls "
        "(llama-server needs --jinja; an Ollama model needs the tools capability)."
    )
