"""/memory, /grep and /log, driven by Pilot: live reload, editing, conflicts, versions."""

from __future__ import annotations

from textual.widgets import Checkbox, Input, Markdown, OptionList, TabbedContent, TextArea

from app.main import KeptApp
from app.screens.conflict import ConflictDialog
from app.screens.log import LogScreen
from app.screens.memory import MemoryScreen
from app.screens.search import SearchScreen
from app.screens.transcript import TranscriptScreen
from memory import MemorySettings, MemoryStore, consolidate_pending
from tests.fakes.provider import FakeProvider, http_error, tool_call
from tests.support import (
    FAST_POLICY,
    fake_catalog,
    make_app,
    pending_session,
    save_args,
    settle,
    until,
)


def shown(app: KeptApp, selector: str) -> str:
    widget = app.screen.query_one(selector)
    if isinstance(widget, Markdown):
        return widget.source
    return str(widget.render())


def seeded() -> MemoryStore:
    store = MemoryStore().ensure()
    store.write_memory("# Me\n- likes tea\n")
    store.append_history("[2026-11-01 09:00] Talked about green tea.")
    store.append_history("[2026-11-02 09:00] Planned a trip to Lisbon.")
    return store


async def test_memory_and_history_reload_when_the_files_change_on_disk() -> None:
    store = seeded()

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        assert "likes tea" in shown(app, "#memory-view")
        history = shown(app, "#history-view")
        assert history.index("Lisbon") < history.index("green tea")  # newest first

        def saved_by_an_editor() -> bool:
            """An editor's save (write a temporary file, rename it over MEMORY.md),
            made again until it is shown: the watcher starts in its own time."""
            if "coffee" in shown(app, "#memory-view"):
                return True
            temporary = store.root / ".MEMORY.md.swp"
            temporary.write_text("# Me\n- likes coffee now\n")
            temporary.replace(store.memory_path)
            return False

        await until(saved_by_an_editor, message="MEMORY.md")
        store.append_history("[2026-11-03 09:00] Booked the flight.")
        await until(lambda: "Booked" in shown(app, "#history-view"), message="HISTORY.md")


async def test_editing_in_place_saves_atomically_and_makes_a_version() -> None:
    store = seeded()

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await pilot.press("e")
        editor = app.screen.query_one("#editor", TextArea)
        assert editor.display and editor.text == "# Me\n- likes tea\n"
        editor.move_cursor(editor.document.end)
        await pilot.press(*"- lives in Lisbon")
        await pilot.press("ctrl+s")
        await until(lambda: not editor.display, message="the save")
    assert store.memory_path.read_text() == "# Me\n- likes tea\n- lives in Lisbon"
    assert [v.source for v in store.versions()] == ["edited by you", "edited by you"]
    assert store.versions()[0].path.read_text() == "# Me\n- likes tea\n"


async def test_a_change_on_disk_during_an_edit_shows_both_and_keeps_both() -> None:
    store = seeded()

    async def scenario(choice: str) -> None:
        app = make_app(None, env={"OPENAI_API_KEY": "x"})
        async with app.run_test(size=(130, 40)) as pilot:
            await pilot.press(*"/memory", "enter")
            await pilot.press("e")
            editor = app.screen.query_one("#editor", TextArea)
            editor.load_text("# Me\n- my edit\n")
            store.memory_path.write_text("# Me\n- saved by Kept meanwhile\n")
            await pilot.press("ctrl+s")
            await until(lambda: isinstance(app.screen, ConflictDialog), message="the conflict")
            assert "my edit" in shown(app, "#mine")
            assert "saved by Kept meanwhile" in shown(app, "#theirs")
            await pilot.click(f"#{choice}-button")
            await until(lambda: not editor.display, message="the choice carried out")
            assert isinstance(app.screen, MemoryScreen)

    await scenario("mine")
    assert store.memory_path.read_text() == "# Me\n- my edit\n"
    texts = [v.path.read_text() for v in store.versions()]
    assert "# Me\n- saved by Kept meanwhile\n" in texts

    store.memory_path.write_text("# Me\n- before\n")
    await scenario("theirs")
    assert store.memory_path.read_text() == "# Me\n- saved by Kept meanwhile\n"
    assert store.versions()[-1].source == "your edit, not kept"
    assert store.versions()[-1].path.read_text() == "# Me\n- my edit\n"


async def test_a_save_waits_for_another_writer_without_freezing_the_screen() -> None:
    import threading

    store = seeded()
    held, release, released_by_test = threading.Event(), threading.Event(), []

    def another_writer() -> None:
        with store.lock():
            held.set()
            released_by_test.append(release.wait(30))

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await pilot.press("e")
        editor = app.screen.query_one("#editor", TextArea)
        editor.load_text("# Me\n- my edit\n")
        writer = threading.Thread(target=another_writer)
        writer.start()
        assert held.wait(30)
        await pilot.press("ctrl+s")  # frozen here, until the writer gives up, if on the loop
        await pilot.pause()
        assert editor.display  # still waiting for the lock, and the screen answers
        release.set()
        await until(lambda: not editor.display, message="the save")
        writer.join()
    assert released_by_test == [True]
    assert store.memory_path.read_text() == "# Me\n- my edit\n"


async def test_versions_show_a_diff_and_restore() -> None:
    store = seeded()
    store.save_edit("# Me\n- likes tea\n- and cake\n", store.read_memory().digest)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        app.screen.query_one("#tabs", TabbedContent).active = "versions-tab"
        await pilot.pause()
        versions = app.screen.query_one("#versions", OptionList)
        assert versions.option_count == 2
        versions.highlighted = 1  # the oldest: before the cake
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        assert "+- and cake" in app.screen.diff_text  # now has what the version lacks
        await pilot.click("#restore")
        await until(lambda: len(store.versions()) == 3, message="the restore")
    assert store.memory_path.read_text() == "# Me\n- likes tea\n"
    assert store.versions()[-1].source == "restore of version 1"


TABS = ("memory-tab", "instructions-tab", "history-tab", "versions-tab", "blame-tab")


async def test_number_keys_switch_tabs_from_every_pane() -> None:
    store = seeded()
    store.save_edit("# Me\n- likes tea\n- and cake\n", store.read_memory().digest)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.press(*"/memory", "enter")
        await pilot.pause()
        screen = app.screen
        tabs = screen.query_one(TabbedContent)
        for start, pane in enumerate(TABS, start=1):
            await pilot.press(str(start))
            await pilot.pause()
            inside = [w for w in screen.focus_chain if screen.query_one(f"#{pane}") in w.ancestors]
            assert inside, pane
            # From each widget that can have focus (the Where from list and its detail
            # pane among them), the key of the next tab: every key, from every pane.
            key = start % len(TABS) + 1
            for widget in inside:
                await pilot.press(str(start))
                widget.focus()
                await pilot.pause()
                await pilot.press(str(key))
                await pilot.pause()
                assert tabs.active == TABS[key - 1], f"{key} from {widget!r} in {pane}"


async def test_where_from_offers_enter_only_on_lines_a_session_wrote(fake: FakeProvider) -> None:
    """A line you wrote says so, and when, without offering a session to open."""
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()
    journal = pending_session(
        store,
        [
            {"role": "user", "content": "I live in Zürich.", "time": "2026-11-20T09:15:00+00:00"},
            {"role": "assistant", "content": "Lovely!", "time": "2026-11-20T09:15:02+00:00"},
        ],
    )
    fake.set_default(
        "llama-3.3-70b-versatile",
        tool_call(
            "save_memory",
            save_args(memory="# About Ana\n- Lives in Zürich\n", quote="I live in Zürich"),
        ),
    )
    (result,) = await consolidate_pending(store, fake_catalog(fake), policy=FAST_POLICY)
    assert result.saved
    memory = store.read_memory()
    store.save_edit(memory.text + "- Owns a sailboat\n", memory.digest)
    store.remember("Prefers metric units")
    store.memory_path.write_text(store.read_memory().text + "- Plays the cello\n")
    edit, remembered = store.versions()[-2:]

    app = make_app(fake)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.press(*"/memory", "enter", "b")
        await pilot.pause()
        screen = app.screen
        lines = screen.query_one("#blame", OptionList)
        assert lines.option_count == 5

        async def looking_at(index: int) -> tuple[str, str | None]:
            """The detail pane on line `index`, and the Enter the footer offers there."""
            lines.highlighted = index
            await pilot.pause()
            enter = screen.active_bindings.get("enter")
            offered = enter.binding.description if enter and enter.binding.show else None
            return shown(app, "#blame-detail"), offered

        detail, offered = await looking_at(3)  # - Prefers metric units
        when = remembered.time[:16].replace("T", " ")
        assert f"You asked Kept to remember this line on {when}" in detail
        assert "Enter" not in detail and offered is None
        detail, offered = await looking_at(2)  # - Owns a sailboat
        when = edit.time[:16].replace("T", " ")
        assert f"You wrote this line by hand; version {edit.number} kept it on {when}." in detail
        assert "Enter" not in detail and offered is None
        detail, offered = await looking_at(4)  # - Plays the cello: in no version yet
        assert "You wrote this line by hand (edited by you) after version" in detail
        assert "Enter" not in detail and offered is None
        await pilot.press("enter")  # not taken: nothing opens, nothing is said
        await pilot.pause()
        assert screen is app.screen
        detail, offered = await looking_at(1)  # - Lives in Zürich: the session's
        assert f"session {journal.id}" in detail
        assert "Enter: open the session's transcript there." in detail
        assert offered == "Open its session"
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, TranscriptScreen), message="transcript")
        assert isinstance(app.screen, TranscriptScreen) and app.screen.marked == [0]


async def test_search_screen_finds_highlights_and_opens_the_entry() -> None:
    store = seeded()
    journal = pending_session(store)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.press(*"/grep TEA", "enter")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await settle(pilot)
        assert shown(app, "#search-summary") == "1 line matches"
        assert screen.matches[0].stamp == "2026-11-01 09:00"
        screen.query_one("#case", Checkbox).toggle()
        await settle(pilot)
        assert shown(app, "#search-summary") == "No match."
        screen.query_one("#pattern", Input).value = "Zür|Lisbon"
        screen.query_one("#regex", Checkbox).toggle()
        await settle(pilot)
        assert {m.file.name for m in screen.matches} == {"HISTORY.md", f"{journal.id}.jsonl"}
        results = screen.query_one("#results", OptionList)
        results.highlighted = 0  # newest first: the open session
        await pilot.pause()
        assert "j'habite à Zürich" in shown(app, "#entry")
        results.highlighted = 1
        await pilot.pause()
        assert "Planned a trip to Lisbon." in shown(app, "#entry")
        screen.query_one("#pattern", Input).value = "(broken"
        screen.search()
        await settle(pilot)
        assert shown(app, "#search-summary").startswith("Bad regular expression")


async def test_log_screen_shows_chains_and_retries_pending_sessions(fake: FakeProvider) -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store)
    journal.mark_failed(journal.pending[0], "No model in the chain answered")
    store.log(
        {
            "session": "old",
            "segment": "0-2",
            "model": "qwen3-32b",
            "outcome": "rejected",
            "reason": "did not call save_memory",
            "latency": 1.0,
            "cost": 0.0001,
        }
    )
    store.log(
        {
            "session": "old",
            "segment": "0-2",
            "model": "gpt-4.1-mini",
            "outcome": "ok",
            "latency": 4.1,
            "cost": 0.0008,
        }
    )
    fake.default = http_error(503)

    app = make_app(fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)  # the start-up retry fails: every model answers 503
        fake.default = tool_call("save_memory", save_args())
        await pilot.press(*"/log", "enter")
        await pilot.pause()
        assert isinstance(app.screen, LogScreen)
        await until(lambda: journal.id in shown(app, "#pending"), message="the log, read")
        assert "old [0-2] ✓ qwen3-32b → did not call save_memory → gpt-4.1-mini ✓ 4.1 s" in shown(
            app, "#chains"
        )
        assert journal.id in shown(app, "#pending")
        assert "llama-3.3-70b-versatile: cooling down until " in shown(app, "#health")
        assert "after 2 × 503" in shown(app, "#health")
        await pilot.click("#retry")
        await settle(pilot)
        await until(lambda: shown(app, "#pending") == "Nothing pending.", message="the retry")
    assert store.find_session(journal.id).state == "consolidated"
