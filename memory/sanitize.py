"""Text from outside is stripped of terminal escapes: the one sanitiser lives in the
lowest layer (catalog), where provider text first enters Kept."""

from __future__ import annotations

from catalog.sanitize import clean_text

__all__ = ["clean_text"]
