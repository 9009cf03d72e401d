"""A long streamed reply is drawn in parts, each sealed once it is long, so that a frame
lays out only the open part: it looks exactly as the whole reply drawn at once, and its text
is exactly what arrived."""

from __future__ import annotations

import asyncio
import contextlib

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widgets import Markdown

from app.widgets.message import SEAL_BLOCKS, MessageView
from tests.support import until
from themes import STYLES

REPLY = "".join(
    f"Paragraph {n} with **bold** and `code`, long enough to wrap at this width. " * 2
    + "\n\n"
    + ("## A heading\n\n" if n % 7 == 3 else "")
    + ("- one\n- two\n\n  more of two\n\n" if n % 11 == 5 else "")
    + ("```\nfenced\n\nwith a blank line\n```\n\n" if n % 13 == 8 else "")
    for n in range(60)
)


class Host(App[None]):
    CSS_PATH = STYLES  # Kept's own

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield MessageView("Model", self.text, kind="assistant")


TALL = (70, 1000)  # the whole reply on screen at once


def _screen(app: App[None]) -> str:
    view = app.query_one(MessageView)
    assert 100 < view.outer_size.height < TALL[1]
    return app.export_screenshot()


async def _streamed(pieces: list[str], reply: str = REPLY) -> tuple[str, str, list[Markdown]]:
    app = Host()
    async with app.run_test(size=TALL) as pilot:
        view = app.query_one(MessageView)
        for piece in pieces:
            view.feed(piece)
            await view.flush(now=True)
        await view.finish(reply)
        parts = list(view.query_children(Markdown))
        await until(lambda: view.outer_size.height > 100, message="the reply laid out")
        await pilot.pause()
        return _screen(app), view.text, parts


async def _whole(reply: str = REPLY) -> str:
    app = Host(reply)
    async with app.run_test(size=TALL) as pilot:
        view = app.query_one(MessageView)
        await until(lambda: view.outer_size.height > 100, message="the reply laid out")
        await pilot.pause()
        return _screen(app)


async def test_a_long_streamed_reply_looks_as_the_whole_reply() -> None:
    pieces = [REPLY[i : i + 37] for i in range(0, len(REPLY), 37)]
    lines, text, parts = await _streamed(pieces)
    assert text == REPLY
    assert len(parts) > 2  # sealed as it grew
    assert all(len(part.children) < SEAL_BLOCKS + 2 for part in parts)
    assert lines == await _whole()


async def test_a_sealed_part_is_not_laid_out_again_as_the_reply_grows() -> None:
    async def scenario() -> set[int]:
        app = Host()
        async with app.run_test(size=(70, 30)) as pilot:
            view = app.query_one(MessageView)
            half = len(REPLY) // 2
            view.feed(REPLY[:half])
            await view.flush(now=True)
            sealed = view.query_children(Markdown).first()
            await until(
                lambda: "Paragraph 29" in sealed.source and sealed.size.height > 0,
                message="the first half laid out",
            )
            heights: set[int] = set()
            arrange = sealed.arrange

            def watched(size: Size, optimal: bool = False):  # type: ignore[no-untyped-def]
                heights.add(size.height)
                return arrange(size, optimal)

            sealed.arrange = watched  # type: ignore[method-assign]
            for at in range(half, len(REPLY), 200):  # the reply below it grows, frame by frame
                view.feed(REPLY[at : at + 200])
                await view.flush(now=True)
                await pilot.pause()
            await view.finish()
            await pilot.pause()
            return heights - {0, sealed.size.height}

    # Before, a part was laid out again against the whole message's height at each frame.
    assert await scenario() == set()


async def test_a_long_reply_restarted_or_corrected_leaves_no_part_behind() -> None:
    async def scenario() -> tuple[int, str, int, str]:
        app = Host()
        async with app.run_test(size=(70, 30)):
            view = app.query_one(MessageView)
            view.feed(REPLY)
            await view.flush(now=True)
            await view.restart()  # the model failed: the next one starts afresh
            restarted = len(view.query_children(Markdown)), view.markdown.source
            view.feed(REPLY)
            await view.finish("The whole answer, as the journal has it.")
            parts = list(view.query_children(Markdown))
            return (*restarted, len(parts), parts[0].source)

    assert await scenario() == (1, "", 1, "The whole answer, as the journal has it.")


async def test_a_block_of_several_lines_open_when_its_part_is_sealed_is_kept_whole() -> None:
    # Two lines at a time: when the part is sealed, the code block has begun and already
    # holds lines. Before, the new part went on from the block's last line only, and the
    # lines above it vanished from the screen (the code drawn as a paragraph).
    reply = "".join(f"Paragraph {n}, long enough to wrap. " * 14 + "\n\n" for n in range(15))
    reply += "```python\n" + "".join(f"x{n} = {n}\n" for n in range(8)) + "```\n\nAfter.\n"
    lines = reply.splitlines(keepends=True)
    pieces = ["".join(lines[i : i + 2]) for i in range(0, len(lines), 2)]
    screen, text, parts = await _streamed(pieces, reply)
    assert text == reply
    assert len(parts) > 1
    assert screen == await _whole(reply)


async def test_a_wait_for_the_drawing_cancelled_midway_leaves_the_reply_to_finish() -> None:
    # A failed attempt's pump is cancelled while it restarts the reply: the next finish
    # must still run (before, it raised CancelledError: no tokens counted, no notice).
    text = "".join(f"Paragraph {n} with some words.\n\n" for n in range(200))

    async def scenario() -> list[str]:
        outcomes = []
        for turns in (1, 3, 10):
            app = Host()
            async with app.run_test(size=(70, 40)):
                view = app.query_one(MessageView)
                view.feed(text)
                await view.flush(now=True)  # the writer is appending a long text
                pump = asyncio.create_task(view.restart())
                for _ in range(turns):
                    await asyncio.sleep(0)
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump
                try:
                    await view.finish("The answer, as the journal has it.")
                except asyncio.CancelledError:
                    outcomes.append("finish raised CancelledError")
                else:
                    outcomes.append(view.markdown.source)
        return outcomes

    assert await scenario() == ["The answer, as the journal has it."] * 3
