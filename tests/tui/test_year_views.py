"""/memory and /log with a long history: what grows with it is read in a thread and only
where it changed, and a screen draws a screenful, not every entry."""

from __future__ import annotations

from textual.widgets import Markdown, OptionList

from app.main import KeptApp
from app.screens.log import SHOWN, LogScreen
from app.screens.memory import HISTORY_SHOWN, VERSIONS_SHOWN, MemoryScreen
from memory import MemoryStore
from memory.data.history import join_entries
from tests.support import make_app, pending_session, until


def history_of(app: KeptApp) -> str:
    return app.screen.query_one("#history-view", Markdown).source


def version_rows(app: KeptApp) -> list[str]:
    options = app.screen.query_one("#versions", OptionList)
    return [str(options.get_option_at_index(i).id) for i in range(options.option_count)]


async def test_memory_shows_the_newest_history_and_says_how_many_are_older() -> None:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n- likes tea\n")
    entries = [
        f"[2025-{1 + n // 28 % 12:02d}-{1 + n % 28:02d} 10:00] Talked about topic {n}."
        for n in range(HISTORY_SHOWN + 40)
    ]
    (store.archive_dir / "2025-01.md").write_text(join_entries(entries))

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await until(lambda: isinstance(app.screen, MemoryScreen), message="/memory")
        await until(lambda: "older entries" in history_of(app), message="the archive")
        assert "… and 40 older entries: /grep searches them all." in history_of(app)
        assert history_of(app).count("Talked about topic") == HISTORY_SHOWN


async def test_a_new_version_is_listed_without_reading_the_older_records_again() -> None:
    store = MemoryStore().ensure()
    for word in ("tea", "jazz", "rain"):
        store.remember(f"likes {word}")

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter", "4")
        await until(lambda: version_rows(app) == ["3", "2", "1"], message="the versions")
        # Records already shown are not read again: this one could not be now.
        (store.versions_dir / "000001.json").write_text("{ torn")

        def remembered() -> bool:
            """Written again until the watcher, which starts in its own time, sees it."""
            if version_rows(app)[:1] == ["4"]:
                return True
            if store.version(4) is None:
                store.remember("likes the sea")
            else:
                store.memory_path.touch()
            return False

        await until(remembered, message="the new version")
        assert version_rows(app) == ["4", "3", "2", "1"]


async def test_log_lists_a_screenful_of_pending_sessions_and_counts_the_rest() -> None:
    store = MemoryStore().ensure()
    for _ in range(SHOWN + 7):
        pending_session(store)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"/log", "enter")
        await until(lambda: isinstance(app.screen, LogScreen), message="/log")

        def pending_text() -> str:
            return str(app.screen.query_one("#pending").render())

        await until(lambda: "more" in pending_text(), message="the pending sessions")
        assert "… and 7 more (`kept log` lists them all)" in pending_text()
        assert len(pending_text().splitlines()) == SHOWN + 1


async def test_versions_list_the_newest_and_enter_lists_the_older() -> None:
    store = MemoryStore().ensure()
    for n in range(VERSIONS_SHOWN + 5):
        store.save_version(f"- fact {n}\n".encode(), "edited by you", time="2026-11-20T09:00:00")

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter", "4")
        await until(lambda: len(version_rows(app)) == VERSIONS_SHOWN + 1, message="versions")
        rows = version_rows(app)
        assert rows[0] == str(VERSIONS_SHOWN + 5) and rows[-2] == "6"
        options = app.screen.query_one("#versions", OptionList)
        assert "5 older versions: Enter lists more" in str(options.get_option_at_index(-1).prompt)
        options.focus()
        options.highlighted = options.option_count - 1
        await pilot.press("enter")
        await until(lambda: len(version_rows(app)) == VERSIONS_SHOWN + 5, message="the rest")
        assert version_rows(app)[-1] == "1"
