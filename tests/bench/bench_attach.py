"""Attaching a 50-page PDF: the time to read it (beside a text file of the same words) and
the size of the chat request it makes (beside a plain text message), in the same run."""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from memory import LiveSession, MemoryStore
from memory.chat.attachments import Attachment, keep, read_attachment
from memory.chat.turn import answer
from tests.attach_files import text_pdf
from tests.fakes.provider import FakeProvider
from tests.support import FAST_POLICY, fake_catalog

PAGES = 50
LINE = "The committee reviewed the quarterly figures and agreed on the plan for May."


def page(number: int) -> str:
    """About as many words as a page of a report: 45 lines of 77 characters."""
    return "\n".join(f"{number}.{i} {LINE}" for i in range(45))


def timed(path: Path) -> tuple[float, Attachment]:
    times = []
    for _ in range(5):
        started = time.perf_counter()
        attachment = read_attachment(path)
        times.append(time.perf_counter() - started)
    return statistics.median(times), attachment


def request_size(root: Path, attachment: Attachment | None) -> int:
    """The bytes of the chat request the fake provider received for one message."""
    with FakeProvider() as fake:
        store = MemoryStore(root)
        session = LiveSession.start(store, "gpt-4.1-mini")
        message: dict[str, object] = {"role": "user", "content": "Summarise this report."}
        if attachment is not None:
            message["attachments"] = [keep(store, attachment)]
        session.append(message)
        turn = asyncio.run(answer(session, fake_catalog(fake), "gpt-4.1-mini", policy=FAST_POLICY))
        assert turn.ok, turn.reason
        return len(json.dumps(fake.requests[0].body, ensure_ascii=False).encode())


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        pdf = root / "report.pdf"
        pdf.write_bytes(text_pdf([page(n) for n in range(1, PAGES + 1)]))
        pdf_time, attachment = timed(pdf)
        assert attachment.text is not None
        plain = root / "report.txt"
        plain.write_text(attachment.text)
        text_time, _ = timed(plain)
        print(f"   {'attach':34} {'time':>9}  {'size':>9}  tokens")
        print(
            f"   {f'{PAGES}-page PDF':34} {pdf_time * 1000:7.1f} ms  "
            f"{attachment.size / 1024:6.0f} KB  ~{attachment.tokens:,}"
        )
        print(
            f"   {'the same words as a text file':34} {text_time * 1000:7.1f} ms  "
            f"{plain.stat().st_size / 1024:6.0f} KB"
        )
        with_pdf = request_size(root / "a", attachment)
        without = request_size(root / "b", None)
        print(f"   request with the PDF: {with_pdf / 1024:,.0f} KB; a plain message: "
              f"{without / 1024:,.1f} KB (the system prompt and tools)")  # fmt: skip


if __name__ == "__main__":
    main()
