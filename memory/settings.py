"""The [memory] table of config.toml: each key's default and bounds declared once, on its
field; a mistake is a sentence and the default stands in for it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Annotated, Any

from catalog.config import parse_table
from catalog.schema import STRICT, AfterValidator, Field, with_config


class Review(StrEnum):
    """When you see a consolidation's change: after it is saved, or before (it waits);
    "auto": before for local models and for a model whose recent edits were refused
    (memory.consolidation.trust), after for the rest."""

    AFTER = "after"
    BEFORE = "before"
    AUTO = "auto"


@with_config(STRICT)
@dataclass(frozen=True)
class AttachmentLimits:
    """[attachments]: the largest file Kept attaches, per kind (bytes), and a PDF's pages.
    Images default to 5 MB, the most Anthropic takes per image."""

    text_max_bytes: Annotated[int, Field(ge=1_000, le=100_000_000, strict=True)] = 2_000_000
    pdf_max_bytes: Annotated[int, Field(ge=1_000, le=500_000_000, strict=True)] = 32_000_000
    pdf_max_pages: Annotated[int, Field(ge=1, le=10_000, strict=True)] = 500
    image_max_bytes: Annotated[int, Field(ge=1_000, le=100_000_000, strict=True)] = 5_000_000

    @property
    def largest(self) -> int:
        return max(self.text_max_bytes, self.pdf_max_bytes, self.image_max_bytes)


@with_config(STRICT)
@dataclass(frozen=True)
class MemorySettings:
    """[memory]. Bounds hold for config.toml; code (tests) may build any figures."""

    # "" composes the chain from what can answer (catalog.chains); a model id heads it.
    consolidation_model: Annotated[
        str,
        Field(strict=True, description='a model id (or "" to let Kept choose)'),
        AfterValidator(str.strip),
    ] = ""
    # seconds per consolidation request
    attempt_deadline: Annotated[float, Field(ge=1.0, le=600.0, strict=True)] = 30.0
    # the size budget of MEMORY.md
    memory_max_chars: Annotated[int, Field(ge=500, le=1_000_000, strict=True)] = 16_000
    # HISTORY.md rolls older entries into history/ past this size
    history_window_chars: Annotated[int, Field(ge=1_000, le=100_000_000, strict=True)] = 64_000
    history_entry_max_chars: Annotated[int, Field(ge=100, le=100_000, strict=True)] = 4_000
    # a live session larger than this is compacted
    session_max_messages: Annotated[int, Field(ge=4, le=100_000, strict=True)] = 200
    session_max_tokens: Annotated[int, Field(ge=1_000, le=10_000_000, strict=True)] = 48_000
    # what stays in the model's context after compaction
    session_keep_messages: Annotated[int, Field(ge=2, le=10_000, strict=True)] = 40
    # how much of MEMORY.md the system prompt carries
    prompt_memory_chars: Annotated[int, Field(ge=0, le=1_000_000, strict=True)] = 16_000
    review: Review = Review.AUTO  # "before": each change waits for your decision
    # Per model id, overriding `review`: {"smollm2" = "after"} trusts that model.
    review_by_model: Annotated[
        dict[str, Review],
        Field(description='a table of model ids, each "after", "before" or "auto"'),
    ] = field(default_factory=dict)
    # A model late past its usual time (p95) has the next one asked beside it; see README.
    hedge: Annotated[bool, Field(strict=True)] = True
    # A model other than the one that proposed a consolidation's lines checks each against
    # the user's words it quotes (memory.consolidation.judge).
    second_opinion: Annotated[bool, Field(strict=True)] = True
    # After each saved consolidation, `kept sync` in the background (a data folder set up
    # with `kept sync init`).
    sync_after_consolidation: Annotated[bool, Field(strict=True)] = False
    # The [attachments] table (a table of its own in config.toml; see parse_memory_settings).
    attachments: AttachmentLimits = field(default_factory=AttachmentLimits)


def parse_memory_settings(data: dict[str, Any], where: str) -> tuple[MemorySettings, list[str]]:
    """The [memory] and [attachments] tables of a parsed config.toml, with a sentence for
    each mistake."""
    settings, problems = parse_table(MemorySettings, data.get("memory", {}), f"{where}: [memory]")
    limits, more = parse_table(
        AttachmentLimits, data.get("attachments", {}), f"{where}: [attachments]"
    )
    settings = replace(settings or MemorySettings(), attachments=limits or AttachmentLimits())
    return settings, problems + more
