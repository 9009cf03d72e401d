"""Whether a model can be offered tools: a hosted model can; a local model only when its
server says it takes tool calls (llama.cpp's GET /props `chat_template_caps`, Ollama's
POST /api/show `capabilities`), since a server that cannot would fail on the request, or
answer with the call written out as text."""

from __future__ import annotations

from catalog.capabilities import takes_tools
from catalog.catalog import Catalog

__all__ = ["takes_tools", "tools_off_sentence"]


def tools_off_sentence(catalog: Catalog, model: str) -> str:
    label = catalog.get(model).label if model in catalog else model
    return (
        f"Tools are off for {label}: its server does not say it takes tool calls "
        "(llama-server needs --jinja; an Ollama model needs the tools capability)."
    )
