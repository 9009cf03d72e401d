"""The model catalog: every model Kept can use, in one table.

Adding a model is one line. Prices are US dollars per million tokens and are only needed
where litellm's own price map lacks the model (see `catalog.pricing`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelEntry:
    """One model: how to show it, reach it, and what to try when it fails."""

    id: str
    label: str
    tier: str
    description: str
    gateway: str
    fallback: str | None = None
    hidden: bool = False
    # The name the provider knows it by, when it differs from `id`.
    api_model: str | None = None
    # Figures of our own, used where litellm's map has none.
    context_window: int | None = None
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    supports_tool_choice: bool = True
    # How to ask for save_memory's arguments as constrained JSON (see `catalog.structured`):
    # None calls the tool, as hosted models do reliably; local servers get a JSON schema.
    structured_output: str | None = None
    # Seconds one request may take, overriding [transport] attempt_deadline (slow CPU models).
    deadline: float | None = None
    # Set for models from the user's config.toml, not the built-in table.
    user: bool = False

    @property
    def provider_model(self) -> str:
        return self.api_model or self.id


# How a local server started without an alias names a model: by its file, as an absolute
# path (POSIX, ~ or a Windows drive) or a name ending in a model file's extension.
_ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/])")
_EXTENSION = re.compile(r"\.(?:gguf|ggml|bin|safetensors|llamafile)$", re.IGNORECASE)


def short_label(model_id: str) -> str:
    """The label for a model id a server gave: a file path becomes the file's name without
    its extension (`SmolLM2-135M-Instruct.Q4_1`); any other id is its own label."""
    if not (_ABSOLUTE.match(model_id) or _EXTENSION.search(model_id)):
        return model_id
    name = re.split(r"[\\/]", model_id.rstrip("/\\"))[-1]
    return _EXTENSION.sub("", name) or model_id


M = ModelEntry
# fmt: off
MODEL_CATALOG: tuple[ModelEntry, ...] = (
    M("claude-opus-4-5", "Claude Opus 4.5", "frontier", "Anthropic's most capable model; deep reasoning and long tasks", "anthropic", fallback="gpt-5"),
    M("claude-sonnet-4-5", "Claude Sonnet 4.5", "balanced", "Strong all-rounder for writing, code and analysis", "anthropic", fallback="gpt-4.1"),
    M("claude-haiku-4-5", "Claude Haiku 4.5", "fast", "Quick and inexpensive, good for everyday questions", "anthropic", fallback="gpt-4.1-mini"),
    M("gpt-5", "GPT-5", "frontier", "OpenAI's flagship reasoning model", "openai", fallback="gemini-2.5-pro"),
    M("gpt-5-mini", "GPT-5 mini", "balanced", "Smaller GPT-5 with most of its reasoning at a fraction of the cost", "openai", fallback="claude-haiku-4-5"),
    M("gpt-4.1", "GPT-4.1", "balanced", "Reliable instruction following with a 1M-token context", "openai", fallback="gemini-2.5-flash"),
    M("gpt-4.1-mini", "GPT-4.1 mini", "fast", "Fast, cheap, and good at tool calls", "openai", fallback="claude-haiku-4-5"),
    M("o3", "o3", "reasoning", "Thinks before answering: maths, logic, hard code", "openai", fallback="gpt-5", supports_tool_choice=False),
    M("gemini-2.5-pro", "Gemini 2.5 Pro", "frontier", "Google's strongest model, with a 1M-token context", "gemini", fallback="claude-sonnet-4-5"),
    M("gemini-2.5-flash", "Gemini 2.5 Flash", "balanced", "Fast multimodal model with a 1M-token context", "gemini", fallback="gpt-5-mini"),
    M("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", "fast", "Google's cheapest, fastest model", "gemini", fallback="gpt-4.1-mini"),
    M("gpt-oss-120b", "GPT-OSS 120B", "balanced", "Open-weight reasoning model served fast on Groq", "groq", fallback="gpt-4.1-mini", api_model="openai/gpt-oss-120b"),
    M("gpt-oss-20b", "GPT-OSS 20B", "fast", "Small open-weight model on Groq; very fast", "groq", fallback="llama-3.1-8b-instant", api_model="openai/gpt-oss-20b"),
    M("kimi-k2-instruct", "Kimi K2", "balanced", "Moonshot's agentic open model on Groq", "groq", fallback="gpt-oss-120b", api_model="moonshotai/kimi-k2-instruct-0905", context_window=262_144, input_per_mtok=1.00, output_per_mtok=3.00),
    M("llama-3.1-8b-instant", "Llama 3.1 8B Instant", "fast", "Tiny and instant, for quick lookups", "groq", fallback="gemini-2.5-flash-lite", context_window=131_072, input_per_mtok=0.05, output_per_mtok=0.08),
    M("deepseek-chat", "DeepSeek V3", "balanced", "Capable general model at a low price", "deepseek", fallback="gpt-4.1-mini"),
    # Hidden: the consolidation chain, cheapest and fastest first.
    M("llama-3.3-70b-versatile", "Llama 3.3 70B", "fast", "Consolidates sessions into memory", "groq", fallback="qwen3-32b", hidden=True, context_window=131_072, input_per_mtok=0.59, output_per_mtok=0.79),
    M("qwen3-32b", "Qwen3 32B", "fast", "Consolidation fallback", "groq", fallback="llama-4-scout-17b-16e-instruct", hidden=True, api_model="qwen/qwen3-32b", context_window=131_072, input_per_mtok=0.29, output_per_mtok=0.59),
    M("llama-4-scout-17b-16e-instruct", "Llama 4 Scout", "fast", "Consolidation fallback", "groq", fallback="gpt-4.1-mini", hidden=True, api_model="meta-llama/llama-4-scout-17b-16e-instruct", context_window=131_072, input_per_mtok=0.11, output_per_mtok=0.34),
)
# fmt: on

CONSOLIDATION_HEAD = "llama-3.3-70b-versatile"
DEFAULT_CHAT_MODEL = "claude-sonnet-4-5"
