"""The [memory] table of config.toml, validated strictly; defaults stand in for mistakes."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from catalog.config import config_path, read_toml


class Review(StrEnum):
    """When you see a consolidation's change: after it is saved, or before (it waits)."""

    AFTER = "after"
    BEFORE = "before"


@dataclass(frozen=True)
class MemorySettings:
    # "" composes the chain from what can answer (catalog.chains); a model id heads it.
    consolidation_model: str = ""
    attempt_deadline: float = 30.0  # seconds per consolidation request
    memory_max_chars: int = 16_000  # the size budget of MEMORY.md
    history_window_chars: int = 64_000  # HISTORY.md rolls older entries into history/
    history_entry_max_chars: int = 4_000
    session_max_messages: int = 200  # a live session larger than this is compacted
    session_max_tokens: int = 48_000
    session_keep_messages: int = 40  # what stays in the model's context after compaction
    prompt_memory_chars: int = 16_000  # how much of MEMORY.md the system prompt carries
    review: Review = Review.AFTER  # "before": each change waits for your decision
    # A model late past its usual time (p95) has the next one asked beside it; see README.
    hedge: bool = True


LIMITS: dict[str, tuple[float, float]] = {
    "attempt_deadline": (1.0, 600.0),
    "memory_max_chars": (500, 1_000_000),
    "history_window_chars": (1_000, 100_000_000),
    "history_entry_max_chars": (100, 100_000),
    "session_max_messages": (4, 100_000),
    "session_max_tokens": (1_000, 10_000_000),
    "session_keep_messages": (2, 10_000),
    "prompt_memory_chars": (0, 1_000_000),
}


def parse_memory_settings(data: dict[str, Any], where: str) -> tuple[MemorySettings, list[str]]:
    table = data.get("memory", {})
    if not isinstance(table, dict):
        return MemorySettings(), [f"{where}: 'memory' must be a table ([memory])."]
    problems: list[str] = []
    values: dict[str, Any] = {}
    types = {f.name: f.type for f in fields(MemorySettings)}
    for key, value in table.items():
        if key not in types:
            problems.append(
                f"{where}: [memory] has an unknown key '{key}'; known keys: {', '.join(types)}."
            )
            continue
        if key == "review":
            if value in tuple(Review):
                values[key] = Review(value)
            else:
                problems.append(
                    f'{where}: [memory] review must be "after" or "before", not {value!r}.'
                )
            continue
        if key == "hedge":
            if isinstance(value, bool):
                values[key] = value
            else:
                problems.append(f"{where}: [memory] hedge must be true or false, not {value!r}.")
            continue
        if key == "consolidation_model":
            if isinstance(value, str):
                values[key] = value.strip()
            else:
                problems.append(
                    f"{where}: [memory] consolidation_model must be a model id "
                    '(or "" to let Kept choose).'
                )
            continue
        low, high = LIMITS[key]
        is_int = types[key] == "int"
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if is_int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok or not low <= value <= high:
            noun = "whole number" if is_int else "number"
            problems.append(
                f"{where}: [memory] {key} must be a {noun} from {low:g} to {high:g}, not {value!r}."
            )
            continue
        values[key] = int(value) if is_int else float(value)
    return replace(MemorySettings(), **values), problems


def load_memory_settings(path: Path | None = None) -> tuple[MemorySettings, list[str]]:
    path = path or config_path()
    data, problems = read_toml(path)
    settings, more = parse_memory_settings(data, str(path))
    return settings, problems + more
