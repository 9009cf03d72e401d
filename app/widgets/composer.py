"""The prompt box: multi-line input, Enter to send, recall of earlier prompts; and the
attachments it carries, one chip each, above it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from textual import events
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from app import paths
from app.widgets.pastes import Paste, Remnants
from memory.message import pasted_spans
from memory.sanitize import clean_text

if TYPE_CHECKING:
    from pathlib import Path

    from textual.widgets.text_area import EditResult, Location

    from memory.chat.attachments import Attachment


@dataclass(frozen=True)
class _KeyName:
    """A key name in the shape the parser's table holds (`Keys` members have `.value`)."""

    value: str


# Alt+Enter in xterm-style terminals (and tmux's `send-keys M-Enter`) is ESC CR, or ESC LF.
# Textual 8's parser does not know that pair: it reissues it character by character and
# CR maps to a plain "enter", whatever the Alt, so Alt+Enter would send the message.
# Teaching the parser the pair here makes it "alt+enter" (tests/e2e/test_e2e.py pins it).
# Textual declares the table a Mapping; it is a dict, which its parser reads on each key.
_PARSER_KEYS = cast("dict[str, object]", ANSI_SEQUENCES_KEYS)
_PARSER_KEYS.setdefault("\x1b\r", (_KeyName("alt+enter"),))
_PARSER_KEYS.setdefault("\x1b\n", (_KeyName("alt+enter"),))


NEWLINE_KEYS = ("ctrl+j", "shift+enter", "alt+enter")
ATTACH = "/attach "


class Composer(TextArea):
    """Enter sends; Shift+Enter, Alt+Enter or Ctrl+J adds a line; Up/Down recall prompts."""

    BINDINGS = [
        Binding(",".join(NEWLINE_KEYS), "newline", "New line", show=False),
    ]

    @dataclass
    class Submitted(Message):
        text: str
        offered: bool = False  # it named a file Tab would have attached: it goes as words
        # The [start, end) spans of `text` that were pasted, not typed (memory.message).
        pasted: list[list[int]] = field(default_factory=list)

    class DetachLast(Message):
        """Backspace on an empty composer: the last attachment goes."""

    @dataclass
    class PathChoices(Message):
        """Tab after `/attach` found several paths: these (none once one is chosen)."""

        choices: list[str]

    @dataclass
    class AttachPath(Message):
        """Tab took the offer to attach the file the composer names."""

        path: Path

    def __init__(self, prompts: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(
            soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True, **kwargs
        )
        self.prompts: list[str] = prompts or []
        self._recall: int | None = None
        self.commands: list[str] = []
        self.carrying = False  # attachments wait above: Enter sends them without words
        self.offer: Path | None = None  # the file the text names, which Tab attaches
        self.pastes: list[Paste] = []
        # The pasted spans of earlier prompts, so that one recalled keeps them.
        self.prompt_pastes: dict[str, list[list[int]]] = {}

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._submit()
            return
        # These two at once, not through a binding: keys read together with them (an Enter
        # after a Tab, text typed after Alt+Enter) must find their effect already applied.
        if event.key == "tab":
            event.stop()
            event.prevent_default()
            self.action_complete()
            return
        if event.key == "backspace" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.DetachLast())
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        if event.key == "up" and self.cursor_location[0] == 0 and self.prompts:
            event.stop()
            event.prevent_default()
            self._step_history(-1)
            return
        if (
            event.key == "down"
            and self._recall is not None
            and self.cursor_location[0] == self.document.line_count - 1
        ):
            event.stop()
            event.prevent_default()
            self._step_history(1)
            return
        await super()._on_key(event)

    async def _on_paste(self, event: events.Paste) -> None:
        """A paste (a dropped file's path arrives as one) goes in as TextArea puts it, and
        is remembered as pasted."""
        event.prevent_default()  # else Textual runs TextArea's handler again after this one
        start = self._insertion_start()
        await super()._on_paste(event)
        self._note_paste(start)

    def action_paste(self) -> None:
        """Ctrl+V pastes Kept's own clipboard (a reply copied): pasted too, not typed."""
        start = self._insertion_start()
        super().action_paste()
        self._note_paste(start)

    def _insertion_start(self) -> Location:
        return min(self.selection)

    def _note_paste(self, start: Location) -> None:
        """Remember what went in between `start` and the cursor, where a paste leaves it."""
        end = self.cursor_location
        if self.read_only or end <= start:
            return
        inserted = clean_text(self.get_text_range(start, end))
        text = inserted.strip()
        if text:
            lead = len(inserted) - len(inserted.lstrip())
            before = len(self.get_text_range((0, 0), start))
            self.pastes.append(Paste(text, before + lead))

    def submission(self) -> tuple[str, list[list[int]]]:
        """The text to send, trimmed, and the spans of it that were pasted."""
        whole = clean_text(self.text)
        text = whole.strip()
        lead = len(whole) - len(whole.lstrip())
        remnants = Remnants(whole)
        spans = [[s - lead, e - lead] for p in self.pastes for s, e in remnants.spans(p)]
        return text, pasted_spans(spans, len(text))

    def load_pasted(self, text: str, pasted: list[list[int]]) -> None:
        """Put `text` in the composer, the `pasted` spans of it remembered as pasted."""
        self.load_text(text)
        self.pastes = [Paste(text[s:e], s) for s, e in pasted_spans(pasted, len(text))]
        self.move_cursor(self.document.end)

    def load_text(self, text: str) -> None:
        """Replace the text: what was pasted in the old one is forgotten with it."""
        self.pastes = []
        super().load_text(text)

    def clear(self) -> EditResult:
        """Empty the composer: nothing in it is pasted any more."""
        self.pastes = []
        return super().clear()

    def _submit(self) -> None:
        text, pasted = self.submission()
        if not text and not self.carrying:
            return
        if not self.prompts or self.prompts[-1] != text:
            self.prompts.append(text)
        if pasted:
            self.prompt_pastes[text] = pasted
        self._recall = None
        offered = self.offer is not None
        self.clear()
        self.post_message(self.Submitted(text, offered, pasted))

    def _step_history(self, step: int) -> None:
        index = len(self.prompts) if self._recall is None else self._recall
        index = max(0, min(len(self.prompts), index + step))
        self._recall = None if index == len(self.prompts) else index
        prompt = "" if self._recall is None else self.prompts[index]
        self.load_pasted(prompt, self.prompt_pastes.get(prompt, []))

    def action_newline(self) -> None:
        self.insert("\n")

    def matching_commands(self) -> list[str]:
        text = self.text
        if not text.startswith("/") or " " in text or "\n" in text:
            return []
        return [c for c in self.commands if c.startswith(text)]

    def action_complete(self) -> None:
        if self.offer is not None:
            path, self.offer = self.offer, None
            self.clear()
            self.post_message(self.AttachPath(path))
            return
        if self.text.startswith(ATTACH) and "\n" not in self.text:
            completed, found = paths.complete(self.text[len(ATTACH) :])
            self.load_text(ATTACH + completed)
            self.move_cursor(self.document.end)
            self.post_message(self.PathChoices(found))
            return
        matches = self.matching_commands()
        if matches:
            common = matches[0]
            for match in matches[1:]:
                while not match.startswith(common):
                    common = common[:-1]
            completion = matches[0] + " " if len(matches) == 1 else common
            self.load_text(completion)
            self.move_cursor(self.document.end)
        else:
            self.app.action_focus_next()


class Chip(Static):
    """One attachment: its name while it is read, then its size and token estimate."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{clean_text(path.name)} · reading…", classes="chip reading", markup=False
        )
        self.path = path
        self.attachment: Attachment | None = None

    @property
    def name_shown(self) -> str:
        return self.attachment.name if self.attachment is not None else self.path.name

    def ready(self, attachment: Attachment) -> None:
        self.attachment = attachment
        self.remove_class("reading")
        self.update(clean_text(attachment.label()))  # a file's name is anyone's text


class Chips(Vertical):
    """The attachments the next message carries, in the order attached; hidden when none."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.chips: list[Chip] = []
        self.display = False

    @property
    def attachments(self) -> list[Attachment]:
        return [c.attachment for c in self.chips if c.attachment is not None]

    @property
    def reading(self) -> list[Chip]:
        return [c for c in self.chips if c.attachment is None]

    def add(self, path: Path) -> Chip:
        chip = Chip(path)
        self.chips.append(chip)
        self.mount(chip)
        self.display = True
        return chip

    def drop(self, chip: Chip) -> None:
        if chip in self.chips:
            self.chips.remove(chip)
            chip.remove()
        self.display = bool(self.chips)

    def clear(self) -> None:
        self.chips.clear()
        self.remove_children()
        self.display = False
