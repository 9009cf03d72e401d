"""The [memory] table of config.toml: each key's default and bounds declared once, on its
field; a mistake is a sentence and the default stands in for it."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator
from pydantic.dataclasses import dataclass as table

from catalog.config import STRICT, parse_table


class Review(StrEnum):
    """When you see a consolidation's change: after it is saved, or before (it waits)."""

    AFTER = "after"
    BEFORE = "before"


@table(frozen=True, config=STRICT)
class MemorySettings:
    # "" composes the chain from what can answer (catalog.chains); a model id heads it.
    consolidation_model: str = Field(
        default="", description='a model id (or "" to let Kept choose)'
    )
    attempt_deadline: float = Field(
        default=30.0, ge=1.0, le=600.0
    )  # seconds per consolidation request
    memory_max_chars: int = Field(
        default=16_000, ge=500, le=1_000_000
    )  # the size budget of MEMORY.md
    # HISTORY.md rolls older entries into history/ past this size.
    history_window_chars: int = Field(default=64_000, ge=1_000, le=100_000_000)
    history_entry_max_chars: int = Field(default=4_000, ge=100, le=100_000)
    session_max_messages: int = Field(default=200, ge=4, le=100_000)  # larger is compacted
    session_max_tokens: int = Field(default=48_000, ge=1_000, le=10_000_000)
    # What stays in the model's context after compaction.
    session_keep_messages: int = Field(default=40, ge=2, le=10_000)
    # How much of MEMORY.md the system prompt carries.
    prompt_memory_chars: int = Field(default=16_000, ge=0, le=1_000_000)
    # "before": each change waits for your decision.
    review: Review = Field(default=Review.AFTER, strict=False)
    # A model late past its usual time (p95) has the next one asked beside it; see README.
    hedge: bool = True

    @field_validator("consolidation_model")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()


def parse_memory_settings(data: dict[str, Any], where: str) -> tuple[MemorySettings, list[str]]:
    """The [memory] table of a parsed config.toml, with a sentence for each mistake."""
    settings, problems = parse_table(MemorySettings, data.get("memory", {}), f"{where}: [memory]")
    return settings or MemorySettings(), problems
