"""The base of Kept's modal screens, which carries their shared styles."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

from themes import DIALOG_STYLES

T = TypeVar("T")


class Dialog(ModalScreen[T]):
    # Parsed with the first dialog opened, not at start-up.
    DEFAULT_CSS = DIALOG_STYLES
    SCOPED_CSS = False
