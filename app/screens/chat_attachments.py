"""The chat's attachments: the chips above the composer, each file read off the event
loop, and whether a message can go with them."""

from __future__ import annotations

import contextlib
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from app import paths
from app.widgets.composer import ATTACH, Chip, Chips, Composer
from catalog.llm import is_loaded, litellm
from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from app.screens.chat import ChatScreen
    from memory.chat.attachments import Attachment

WAIT_TO_ATTACH = (
    "A message with attachments is sent once the reply ends: it is back in the composer "
    "with them; press Enter again then (Esc stops the reply now)."
)


class ChatAttachments:
    """The files attached to the next message, on the chat screen that shows them."""

    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat

    @property
    def chips(self) -> Chips:
        return self.chat.query_one(Chips)

    def attach_paths(self, argument: str) -> None:
        """/attach PATH…: each file is read in a worker; its chip shows it meanwhile."""
        try:
            found = paths.split_paths(argument)
        except ValueError as exc:
            self.chat.notice(f"{exc} Nothing was attached.")
            return
        if not found:  # from the palette, or /attach alone: the path is asked for
            composer = self.chat.query_one(Composer)
            if not composer.text.strip():
                composer.load_text(ATTACH)
                composer.move_cursor(composer.document.end)
            composer.focus()
            return
        for path in found:
            self.attach(Path(path))

    def attach(self, path: Path) -> None:
        chip = self.chips.add(path)
        self.changed()
        self.chat.run_worker(
            partial(self._read, chip), thread=True, group="attach", exit_on_error=False
        )

    def _read(self, chip: Chip) -> None:
        """Read the file off the event loop: a big PDF never stops the typing."""
        from memory.chat.attachments import keep

        app = self.chat.app
        attachment = self._attachment(chip)
        if attachment is None:
            return
        if not is_loaded():
            litellm()  # what the model can take, and its window, are litellm's figures
        if attachment.kind == "image":  # a local server is asked here, not at Enter
            from memory.chat.attachments import can_take

            can_take(app.model, {"image"}, app.catalog)
        with contextlib.suppress(OSError):  # stored and fsynced here: Enter finds it stored
            keep(app.store, attachment, private=app.session.private)
        app.call_from_thread(self._read_done, chip, attachment)

    def _attachment(self, chip: Chip) -> Attachment | None:
        """The file read, or None once the chip has gone with a sentence saying why."""
        from memory.chat.attachments import AttachmentError, read_attachment

        app = self.chat.app
        try:
            return read_attachment(chip.path, app.store.settings.attachments)
        except AttachmentError as exc:
            sentence = str(exc)
        except OSError as exc:  # said in one sentence, whatever the domain missed
            sentence = f"{chip.path.name} could not be read: {exc.strerror or str(exc)}."
        except Exception as exc:  # a reader's own failure: the chip must not wait for ever
            sentence = f"{chip.path.name} could not be read ({type(exc).__name__}: {exc})."
        app.call_from_thread(self._not_attached, chip, sentence)
        return None

    def _read_done(self, chip: Chip, attachment: Attachment) -> None:
        if chip in self.chips.chips:  # not detached while it was read
            chip.ready(attachment)
            for sentence in attachment.notices:  # a PDF page without text, say
                self.chat.notice(sentence)

    def _not_attached(self, chip: Chip, sentence: str) -> None:
        self.chips.drop(chip)
        self.changed()
        self.chat.notice(clean_text(sentence), kind="error")

    def detach(self, name: str) -> None:
        """/detach NAME removes that attachment; /detach alone removes them all."""
        chips = self.chips
        if not name:
            chips.clear()
        else:
            named = [c for c in chips.chips if c.name_shown == name] or [
                c for c in chips.chips if str(c.path) == name
            ]
            if not named:
                attached = ", ".join(c.name_shown for c in chips.chips) or "nothing"
                self.chat.notice(f"No attachment is named {name}; attached: {attached}.")
                return
            chips.drop(named[-1])
        self.changed()

    def detach_last(self) -> None:
        chips = self.chips
        if chips.chips:
            chips.drop(chips.chips[-1])
            self.changed()

    def changed(self) -> None:
        self.chat.query_one(Composer).carrying = bool(self.chips.chips)

    def _window(self) -> int | None:
        """The current model's context window; litellm's figures only once it is loaded
        (loading it here would freeze the screen), the catalog's until then."""
        catalog, model = self.chat.app.catalog, self.chat.app.model
        if model not in catalog:
            return None
        entry = catalog.get(model)
        pricing = catalog.pricing(entry) if is_loaded() else None
        return (pricing.context_window if pricing else None) or entry.context_window

    def cannot_send(self, text: str, attachments: list[Attachment]) -> str | None:
        """Why the message cannot go with these attachments, in one sentence (or None)."""
        from app.words.attachments import does_not_fit, vision_model_sentence
        from memory.chat.attachments import can_take

        reading = self.chips.reading
        if reading:
            return (
                f"{reading[0].path.name} is still being read: your message is back in the "
                "composer; press Enter again once its chip shows its size."
            )
        if not attachments:
            return None
        if self.chat.app.replies.replying:
            return WAIT_TO_ATTACH
        app = self.chat.app
        kinds = {a.kind for a in attachments}
        if not can_take(app.model, kinds, app.catalog):
            return vision_model_sentence(app.catalog, app.model)
        window = self._window()
        return does_not_fit(attachments, text, window) if window else None
