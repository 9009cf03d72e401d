"""Gateways: how Kept reaches a family of models (protocol, endpoint, key)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Protocol(StrEnum):
    """A wire format, named by the litellm provider prefix that speaks it."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    GROQ = "groq"
    GEMINI = "gemini"


@dataclass(frozen=True)
class Gateway:
    """An API endpoint and the key that opens it."""

    name: str
    label: str
    protocol: Protocol
    # None means "the provider's own endpoint, as litellm knows it".
    base_url: str | None
    env_var: str | None
    needs_key: bool = True


GATEWAYS: dict[str, Gateway] = {
    g.name: g
    for g in (
        Gateway(
            "anthropic",
            "Anthropic",
            Protocol.ANTHROPIC,
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
        ),
        Gateway("openai", "OpenAI", Protocol.OPENAI, "https://api.openai.com/v1", "OPENAI_API_KEY"),
        Gateway("groq", "Groq", Protocol.GROQ, "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        Gateway("gemini", "Google Gemini", Protocol.GEMINI, None, "GEMINI_API_KEY"),
        Gateway(
            "deepseek",
            "DeepSeek",
            Protocol.OPENAI,
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
        ),
        # Ollama, llama.cpp server, LM Studio: OpenAI-compatible, no key.
        Gateway(
            "local",
            "Local server",
            Protocol.OPENAI,
            "http://127.0.0.1:11434/v1",
            None,
            needs_key=False,
        ),
    )
}
