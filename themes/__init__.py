"""Kept's own Textual themes and the styles of its screens."""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

STYLES = Path(__file__).with_name("kept.tcss")
# The dialogs' styles load with the first dialog, keeping them off the start-up path.
DIALOG_STYLES = Path(__file__).with_name("dialogs.tcss").read_text(encoding="utf-8")

KEPT_THEMES: tuple[Theme, ...] = (
    Theme(
        name="kept-dark",
        primary="#7aa2f7",
        secondary="#bb9af7",
        accent="#e0af68",
        foreground="#c0caf5",
        background="#16161e",
        surface="#1f2335",
        panel="#24283b",
        success="#9ece6a",
        warning="#e0af68",
        error="#f7768e",
        dark=True,
    ),
    Theme(
        name="kept-light",
        primary="#2e59a8",
        secondary="#7847bd",
        accent="#b15c00",
        foreground="#1f2328",
        background="#fbfbf8",
        surface="#f0efe9",
        panel="#e4e2da",
        success="#1a7f37",
        warning="#9a6700",
        error="#cf222e",
        dark=False,
    ),
    Theme(
        name="kept-high-contrast",
        primary="#ffff00",
        secondary="#00ffff",
        accent="#ff9f00",
        foreground="#ffffff",
        background="#000000",
        surface="#000000",
        panel="#1a1a1a",
        success="#00ff00",
        warning="#ffff00",
        error="#ff4040",
        dark=True,
        text_alpha=1.0,
        luminosity_spread=0.25,
    ),
    Theme(
        name="kept-ember",
        primary="#e8915a",
        secondary="#c3a36b",
        accent="#d9695f",
        foreground="#ebdbb2",
        background="#1d1a17",
        surface="#2a2521",
        panel="#36302a",
        success="#a9b665",
        warning="#d8a657",
        error="#ea6962",
        dark=True,
    ),
)
THEME_NAMES = tuple(t.name for t in KEPT_THEMES)
