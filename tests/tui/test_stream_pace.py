"""A streamed reply is drawn at a pace its drawing allows: a long reply's layout grows with
each block, and the keys and the stream must keep most of the time. Nothing is lost."""

from __future__ import annotations

from textual.app import App, ComposeResult

from app.widgets.message import MAX_PAUSE, MessageView
from tests.support import until


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield MessageView("Model", kind="assistant")


async def test_a_draw_waits_for_the_last_one_on_screen_and_three_times_its_cost() -> None:
    await _paced()


async def _paced() -> None:
    app = Host()
    async with app.run_test():
        view = app.query_one(MessageView)
        now = [100.0]
        view.clock = lambda: now[0]
        view.feed("one ")
        await view.flush()
        assert view.text == "one "
        view.feed("two ")
        await view.flush()
        assert view.text == "one "  # the first draw is not on screen yet
        now[0] = 100.1  # it took 0.1 s to be on screen
        await until(lambda: view._drawing is None, message="the first draw on screen")
        now[0] = 100.35
        await view.flush()
        assert view.text == "one "  # three times as long as it took has not passed yet
        now[0] = 100.45
        await view.flush()
        assert view.text == "one two "
        # However long a draw takes, what arrived is drawn within MAX_PAUSE.
        now[0] = 110.0
        await until(lambda: view._drawing is None, message="the second draw on screen")
        view.feed("three ")
        now[0] = 110.0 + MAX_PAUSE
        await view.flush()
        assert view.text == "one two three "
        view.feed("four")
        await view.finish()  # the end is drawn whatever the pace
        assert view.text == "one two three four"


async def test_a_restarted_reply_draws_the_next_model_at_once() -> None:
    await _restarted()


async def _restarted() -> None:
    app = Host()
    async with app.run_test():
        view = app.query_one(MessageView)
        now = [100.0]
        view.clock = lambda: now[0]
        view.feed("from the first model")
        await view.flush()
        await view.restart()
        view.feed("from the second")
        await view.flush()
        assert view.text == "from the second"
        now[0] = 100.2
        await view.finish()
        await until(lambda: view._drawing is None, message="the draw on screen")
        assert view.text == "from the second"
