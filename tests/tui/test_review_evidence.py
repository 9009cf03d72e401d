"""Review shows why: Ctrl+R lists the user's words each line of a change stands on (and when
they were said), the lines Kept could not check by itself and the edits it did not keep;
/memory's Where from shows the words a line stood on; /log lists each session's dropped
edits. Quotes are the user's text: markup in them shows as typed."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widgets import Button, OptionList, Static

from app.screens.change import ChangeDialog
from app.screens.log import LogScreen
from app.screens.memory import MemoryScreen
from memory import MemorySettings, MemoryStore
from memory.data.versions import VersionKind
from memory.settings import Review
from tests.factories import held_proposal
from tests.fakes.provider import FakeProvider
from tests.support import make_app, until

if TYPE_CHECKING:
    from app.main import KeptApp

OLD = "# Me\n- likes tea\n"
NEW = "# Me\n- likes tea\n- Lives in Lyon\n- Likes jazz\n"
SAID = "2026-12-04T10:12:00+00:00"
LATER = "2026-12-04T10:15:00+00:00"
LYON = "I moved to Lyon last month"
JAZZ = "I love [bold]jazz[/bold] at night"
UNSURE = "it is not clear the user said this of themselves"
VIENNA = "'vienna' was never said by the user"
RECORDS: tuple[dict[str, Any], ...] = (
    {
        "op": "add",
        "fate": "applied",
        "line": "Lives in Lyon",
        "evidence": [{"message": 1, "quote": LYON, "time": SAID}],
    },
    {
        "op": "add",
        "fate": "held",
        "line": "Likes jazz",
        "why": UNSURE,
        "evidence": [{"message": 3, "quote": JAZZ, "time": LATER}],
    },
    {"op": "add", "fate": "refused", "line": "Works in Vienna", "why": VIENNA, "evidence": []},
)


def stamp(iso: str) -> str:
    """When a message was said, as the app shows it: local time to the minute."""
    return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")


def on_screen(app: KeptApp) -> str:
    """The characters the screen shows now, row by row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def why_shown(app: KeptApp) -> str:
    """The words below the diff, a part a line, each with its indent."""
    parts = app.screen.query_one("#change-why").query(Static)
    return "\n".join(" " * part.styles.padding.left + str(part.render()) for part in parts)


def proposed(settings: MemorySettings) -> MemoryStore:
    """A store whose one session's change waits for review, with its decisions."""
    return held_proposal(settings, OLD, NEW, RECORDS)


BEFORE = MemorySettings(attempt_deadline=5.0, review=Review.BEFORE)


async def open_review(app: KeptApp, pilot: Any) -> ChangeDialog:
    await pilot.press("ctrl+r")
    await until(lambda: isinstance(app.screen, ChangeDialog), message="the change")
    dialog = app.screen
    assert isinstance(dialog, ChangeDialog)
    await pilot.pause()
    return dialog


async def test_a_proposal_shows_each_lines_quotes_held_and_refused_lines(
    fake: FakeProvider,
) -> None:
    proposed(BEFORE)
    app = make_app(fake, memory_settings=BEFORE)
    async with app.run_test(size=(120, 50)) as pilot:
        dialog = await open_review(app, pilot)
        why = why_shown(app)
        assert f"+ Lives in Lyon\n  “{LYON}” — you, {stamp(SAID)}" in why
        assert f"+ Likes jazz\n  “{JAZZ}” — you, {stamp(LATER)}" in why
        assert f"  Kept could not check this by itself: {UNSURE}; it waits for your review." in why
        assert f"Not kept:\n  add 'Works in Vienna': {VIENNA}" in why
        screen = on_screen(app)
        # The quote's markup shows as the user typed it, not as bold text.
        assert "“I love [bold]jazz[/bold] at night”" in screen
        assert f"“{LYON}” — you, {stamp(SAID)}" in screen
        assert f"add 'Works in Vienna': {VIENNA}" in screen
        assert "Works in Vienna" not in dialog.diff  # refused: never in the change


async def test_the_quotes_are_within_reach_at_80x24(fake: FakeProvider) -> None:
    proposed(BEFORE)
    app = make_app(fake, memory_settings=BEFORE)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_review(app, pilot)
        for button in dialog.query(Button):
            assert button.region.bottom <= 24, f"{button.label} is off the screen"
        dialog.query_one("#change-diff", VerticalScroll).scroll_end(animate=False)
        await pilot.pause()
        screen = on_screen(app)
        assert "Not kept:" in screen and "add 'Works in Vienna'" in screen
        assert "Kept could not check this by itself" in screen
        await pilot.press("e")  # the editor in the diff's place: the buttons stay in sight
        await until(lambda: dialog.query_one("#change-editor").display, message="the editor")
        await pilot.pause()
        for button in dialog.query(Button):
            assert not button.display or button.region.bottom <= 24, f"{button.label} is off"
        await pilot.click("#accept")
        await until(lambda: not isinstance(app.screen, ChangeDialog), message="the accept")
    store = MemoryStore(settings=BEFORE)
    await until(lambda: store.memory_path.read_text() == NEW, message="the accepted change")
    # The accepted version keeps the decisions it stood on.
    (version,) = [v for v in store.versions() if v.kind is VersionKind.CONSOLIDATION]
    assert [d.get("line") for d in version.evidence] == [
        "Lives in Lyon",
        "Likes jazz",
        "Works in Vienna",
    ]


def saved_version(evidence: tuple[dict[str, Any], ...]) -> MemoryStore:
    """MEMORY.md as two consolidations left it: the older without records, the newer with."""
    store = MemoryStore().ensure()
    store.save_version(
        OLD.encode(),
        VersionKind.CONSOLIDATION,
        time="2026-11-01T09:00:00+00:00",
        session="20261101-090000-aaaaaa",
        model="gpt-4.1-mini",
    )
    store.save_version(
        NEW.encode(),
        VersionKind.CONSOLIDATION,
        time="2026-12-04T10:20:00+00:00",
        session="20261204-101000-bbbbbb",
        model="gpt-4.1-mini",
        evidence=evidence,
    )
    store.write_memory(NEW)
    return store


async def test_the_last_saved_change_shows_the_words_it_stands_on(fake: FakeProvider) -> None:
    saved_version(RECORDS)
    app = make_app(fake)
    async with app.run_test(size=(120, 50)) as pilot:
        await open_review(app, pilot)
        why = why_shown(app)
        assert f"+ Lives in Lyon\n  “{LYON}” — you, {stamp(SAID)}" in why
        assert f"Kept could not check this by itself: {UNSURE}; you accepted it." in why
        assert f"add 'Works in Vienna': {VIENNA}" in why
        assert "“I love [bold]jazz[/bold] at night”" in on_screen(app)


async def test_a_change_without_records_shows_only_its_diff(fake: FakeProvider) -> None:
    saved_version(())
    app = make_app(fake)
    async with app.run_test(size=(120, 50)) as pilot:
        dialog = await open_review(app, pilot)
        assert not dialog.query("#change-why")
        assert "Your words behind" not in on_screen(app)


async def test_where_from_shows_the_words_a_line_stood_on(fake: FakeProvider) -> None:
    saved_version(RECORDS)
    app = make_app(fake)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.press(*"/memory", "enter")
        await until(lambda: isinstance(app.screen, MemoryScreen), message="/memory")
        screen = app.screen
        await pilot.press("b")
        lines = screen.query_one("#blame", OptionList)
        await until(lambda: lines.option_count == 4, message="the lines and their versions")

        def detail() -> str:
            return str(screen.query_one("#blame-detail", Static).render())

        lines.highlighted = 3  # "- Likes jazz": version 2, with its quote
        await until(lambda: "Line 4:" in detail(), message="who wrote line 4")
        assert f"It stands on your words:\n  “{JAZZ}” — you, {stamp(LATER)}" in detail()
        assert "Written by version 2" in detail()
        lines.highlighted = 2  # "- Lives in Lyon"
        await until(lambda: "Line 3:" in detail(), message="who wrote line 3")
        assert f"“{LYON}” — you, {stamp(SAID)}" in detail()
        lines.highlighted = 1  # "- likes tea": version 1 kept no record, nothing said
        await until(lambda: "Line 2:" in detail(), message="who wrote line 2")
        assert "Written by version 1" in detail()
        assert "It stands on" not in detail() and "— you" not in detail()


async def test_log_lists_a_sessions_dropped_edits(fake: FakeProvider) -> None:
    store = MemoryStore().ensure()
    for record in (
        {"model": "gpt-4.1-mini", "outcome": "ok", "latency": 2.0, "cost": 0.0001},
        {
            "model": "gpt-4.1-mini",
            "outcome": "dropped",
            "kind": "dropped_edit",
            "reason": "add 'Works in [bold]Vienna[/bold]': 'vienna' was never said by the user",
        },
        {"model": "judge-model", "outcome": "ok", "purpose": "second_opinion"},
    ):
        store.log({"session": "s1", "segment": "0-2", **record})
    app = make_app(fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"/log", "enter")
        await until(lambda: isinstance(app.screen, LogScreen), message="/log")

        def chains() -> str:
            return str(app.screen.query_one("#chains", Static).render())

        await until(lambda: "s1 [0-2]" in chains(), message="the log, read")
        assert (
            "gpt-4.1-mini ✓ 2.0 s $0.0001 → second opinion by judge-model ✓\n"
            "  dropped: add 'Works in [bold]Vienna[/bold]': 'vienna' was never said by the user"
        ) in chains()
        assert "dropped: add 'Works in [bold]Vienna[/bold]'" in on_screen(app)
