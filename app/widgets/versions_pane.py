"""/memory's Versions tab: the versions of MEMORY.md, newest first, the highlighted one
beside MEMORY.md as a diff, and a button that restores it.

`VersionReader` reads the records (off the event loop); `VersionsPane` lists them."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from rich.syntax import Syntax
from textual import on, work
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from app.documents import async_store
from app.words.memory import not_written
from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from app.main import KeptApp
    from memory.data.aio import AsyncStore
    from memory.data.store import Version

# Versions listed at first, newest first; Enter on the last row lists as many more. Each is
# a file to read, and a year of them would keep the list away for seconds.
VERSIONS_SHOWN = 200
OLDER_VERSIONS = "older"


class VersionReader:
    """The newest versions' records, read again only for versions that came since."""

    def __init__(self) -> None:
        self.shown = VERSIONS_SHOWN  # as many as the list shows
        self.older = 0  # versions not listed yet
        self._versions: dict[int, Version] = {}

    async def look(self, store: AsyncStore) -> list[Version] | None:
        """The newest versions, newest first, or None when none came or went since the
        last look: only the records of new versions are read."""
        every = await store.version_numbers()
        self.older = max(len(every) - self.shown, 0)
        numbers = every[self.older :]
        if numbers == list(self._versions):
            return None
        fresh = {n: self._versions[n] for n in numbers if n in self._versions}
        for version in await store.versions([n for n in numbers if n not in fresh]):
            fresh[version.number] = version
        # A record that cannot be read is not listed (and is read again at the next look).
        self._versions = {n: fresh[n] for n in numbers if n in fresh}
        return list(reversed(self._versions.values()))


class VersionsPane(Horizontal):
    """The list, the diff and Restore. Asks for a new look at the files (`LookAgain`) when
    the list should grow or a restore wrote MEMORY.md."""

    app: KeptApp

    class LookAgain(Message):
        """The files should be looked at again: more versions asked for, or one restored."""

        def __init__(self, more: bool = False) -> None:
            super().__init__()
            self.more = more

    def __init__(self) -> None:
        super().__init__()
        self.diff_text = ""
        self._memory_lines: list[str] = []
        self._version_lines: dict[int, list[str]] = {}
        self._diffed: int | None = None

    def compose(self) -> ComposeResult:
        yield OptionList(id="versions", markup=False)
        with VerticalScroll(id="diff-scroll"):
            yield Static("", id="diff")
            yield Button("Restore this version", id="restore", variant="warning")

    def show(self, versions: list[Version] | None, older: int, memory: list[str] | None) -> None:
        """List `versions` (None: the list as it is) and diff against MEMORY.md's lines
        (None: as last read)."""
        if memory is not None:
            self._memory_lines = memory
        if versions is not None:
            self._list(versions, older)  # the highlight moves: the diff follows it
        else:
            self._refresh_diff()  # MEMORY.md may have changed: the diff is against it

    def _list(self, versions: list[Version], older: int) -> None:
        options = self.query_one("#versions", OptionList)
        highlighted = options.highlighted
        rows = []
        for version in versions:
            # The model that wrote it says "consolidation" already; a row stays one line.
            by = version.model if version.session and version.model else version.source
            when = version.time[:16].replace("T", " ")
            rows.append(Option(f"{version.number:>3}  {when}  {by}", id=str(version.number)))
        if older:
            rows.append(Option(f"… {older:,} older versions: Enter lists more", id=OLDER_VERSIONS))
        options.clear_options()
        options.add_options(rows)
        if options.option_count:
            options.highlighted = min(highlighted or 0, options.option_count - 1)

    @on(OptionList.OptionHighlighted, "#versions")
    def show_diff(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id == OLDER_VERSIONS:
            return
        self._diffed = int(str(event.option.id))
        self._refresh_diff()

    @on(OptionList.OptionSelected, "#versions")
    def more_versions(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == OLDER_VERSIONS:
            self.post_message(self.LookAgain(more=True))

    @work(exclusive=True, group="versions-diff", exit_on_error=False)
    async def _refresh_diff(self) -> None:
        """The highlighted version beside MEMORY.md as last read: a version's text is read
        once (versions never change), MEMORY.md only when it changes on disk."""
        number = self._diffed
        if number is None:
            return
        old = self._version_lines.get(number)
        if old is None:
            try:
                raw = await async_store(self.app).version_text(number)
            except (LookupError, OSError) as exc:
                self.query_one("#diff", Static).update(not_written(exc))
                return
            old = self._version_lines[number] = raw.decode("utf-8", errors="replace").splitlines()
            while len(self._version_lines) > 64:  # the last few looked at
                del self._version_lines[next(iter(self._version_lines))]
        diff = clean_text(
            "\n".join(
                difflib.unified_diff(
                    old, self._memory_lines, f"version {number}", "MEMORY.md now", lineterm=""
                )
            )
        )
        self.diff_text = diff
        self.query_one("#diff", Static).update(
            Syntax(diff, "diff", theme="ansi_dark", word_wrap=True)
            if diff
            else f"Version {number} is the same as MEMORY.md now."
        )

    @on(Button.Pressed, "#restore")
    def restore(self) -> None:
        versions = self.query_one("#versions", OptionList)
        if versions.highlighted is None:
            return
        chosen = versions.get_option_at_index(versions.highlighted).id
        if chosen != OLDER_VERSIONS:
            self._restore(int(str(chosen)))

    @work(group="memory-files", exit_on_error=False)
    async def _restore(self, number: int) -> None:
        """Through the async store: its lock waits, off the loop, while another Kept
        process writes."""
        try:
            saved = await async_store(self.app).restore(number)
        except (LookupError, OSError, ValueError) as exc:
            self.app.notify(not_written(exc), title="Memory", severity="error", markup=False)
            return
        self.app.notify(
            f"Restored version {number} (saved as version {saved}).", title="Memory", markup=False
        )
        self.post_message(self.LookAgain())
