"""What a screen asks of the app: each request is a message posted by the screen (it
bubbles up to the App) and handled by the App, which decides and changes its state; the
screens follow that state: a new session, continuing one, a retry, memory changed, a turn
ended, a model chosen. (The local-server form still awaits the App's test of the server: it
shows the sentence that test returns.)"""

from __future__ import annotations

from textual.message import Message
from textual.screen import Screen


class NewSessionRequested(Message):
    """Close this session (saved in the background, or deleted if private) and start a
    new one: /new, /private."""

    def __init__(self, *, private: bool = False) -> None:
        super().__init__()
        self.private = private


class ContinueRequested(Message):
    """Make a past session the live one; the screen that asked is closed once it is."""

    def __init__(self, screen: Screen[None], session_id: str) -> None:
        super().__init__()
        self.screen = screen
        self.session_id = session_id

    @property
    def control(self) -> Screen[None]:
        return self.screen


class RetryRequested(Message):
    """The user asked to save every pending session now: the app runs memory work."""


class MemoryChanged(Message):
    """Files that memory's status counts changed (a session deleted, say): the app counts
    them again, and every screen that shows the status follows."""


class ModelChosen(Message):
    """Chat with this model from now on (onboarding picked it for a key just saved): the app
    checks it, saves the choice and says if it cannot answer yet."""

    def __init__(self, model_id: str) -> None:
        super().__init__()
        self.model_id = model_id


class TurnEnded(Message):
    """A reply has finished (answered, cut off or failed): the session may have outgrown
    its window; the app asks memory what to save."""
