"""What the model is sent of attachments, per wire format, and who is asked at all: the fake
provider records each request as it arrived."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from app.words.chat import failure_notice
from catalog import MODEL_CATALOG, Catalog, ModelEntry, Outcome
from memory import LiveSession, MemoryStore
from memory.chat.attachments import Attachment, keep, read_attachment
from memory.chat.turn import Turn, answer
from memory.message import Message
from tests.attach_files import png, text_pdf
from tests.fakes.provider import FakeProvider, http_error
from tests.support import FAST_POLICY, fake_catalog, local_catalog


def files(tmp_path: Path) -> dict[str, Attachment]:
    (tmp_path / "notes.txt").write_text("The launch code word is PERIWINKLE.\n")
    (tmp_path / "report.pdf").write_bytes(text_pdf(["Revenue rose nine percent", None]))
    (tmp_path / "shot.png").write_bytes(png())
    return {p: read_attachment(tmp_path / p) for p in ("notes.txt", "report.pdf", "shot.png")}


async def ask(
    store: MemoryStore,
    catalog: Catalog,
    model: str,
    attachments: list[Attachment],
    before: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> Turn:
    session = LiveSession.start(store, model)
    for message in before:
        session.append(message)
    records = [keep(store, a) for a in attachments]
    session.append({"role": "user", "content": "What do these say?", "attachments": records})

    async with asyncio.timeout(120):
        return await answer(session, catalog, model, policy=FAST_POLICY)


def last_user_content(body: dict[str, Any]) -> list[dict[str, Any]]:
    user = [m for m in body["messages"] if m["role"] == "user"]
    content = user[-1]["content"]
    assert isinstance(content, list), content
    return content


async def test_openai_gets_text_blocks_and_an_image_url_part(
    fake: FakeProvider, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "data")
    found = files(tmp_path)
    turn = await ask(store, fake_catalog(fake), "gpt-4.1-mini", list(found.values()))
    assert turn.ok, turn.reason
    (request,) = fake.requests
    assert request.gateway == "openai"
    parts = last_user_content(request.body)
    assert parts[0] == {"type": "text", "text": "What do these say?"}
    assert parts[1]["type"] == "text"
    assert parts[1]["text"].startswith('<file name="notes.txt">\nThe launch code word')
    assert parts[2]["type"] == "text" and "Revenue rose nine percent" in parts[2]["text"]
    assert parts[2]["text"].startswith('<file name="report.pdf">')
    assert parts[3]["type"] == "image_url"
    url = parts[3]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(png()).decode()


async def test_anthropic_gets_text_blocks_and_a_base64_image(
    fake: FakeProvider, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "data")
    found = files(tmp_path)
    turn = await ask(
        store, fake_catalog(fake), "claude-haiku-4-5", [found["notes.txt"], found["shot.png"]]
    )
    assert turn.ok, turn.reason
    (request,) = fake.requests
    assert request.gateway == "anthropic"
    parts = last_user_content(request.body)
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert any("PERIWINKLE" in t and 'name="notes.txt"' in t for t in texts)
    (image,) = [p for p in parts if p["type"] == "image"]
    assert image["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(png()).decode(),
    }


def chain_entries() -> tuple[ModelEntry, ...]:
    """sees → blind → sees-too: the middle fallback cannot see images."""
    return (
        *MODEL_CATALOG,
        ModelEntry(
            "sees", "Sees", "fast", "", "openai", fallback="blind", api_model="gpt-4.1-mini"
        ),
        ModelEntry(
            "blind",
            "Blind",
            "fast",
            "",
            "groq",
            fallback="sees-too",
            api_model="llama-3.1-8b-instant",
        ),
        ModelEntry("sees-too", "Sees too", "fast", "", "anthropic", api_model="claude-haiku-4-5"),
    )


async def test_fallbacks_that_cannot_see_an_image_are_skipped(
    fake: FakeProvider, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "data")
    fake.set_default("gpt-4.1-mini", http_error(500))
    catalog = fake_catalog(fake, entries=chain_entries())
    turn = await ask(store, catalog, "sees", [files(tmp_path)["shot.png"]])
    assert turn.ok and turn.model == "sees-too", turn.reason
    assert fake.count(model="llama-3.1-8b-instant") == 0
    assert fake.count(model="claude-haiku-4-5") == 1


async def test_without_an_image_every_fallback_is_asked(fake: FakeProvider, tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data")
    fake.set_default("gpt-4.1-mini", http_error(500))
    catalog = fake_catalog(fake, entries=chain_entries())
    turn = await ask(store, catalog, "sees", [files(tmp_path)["notes.txt"]])
    assert turn.ok and turn.model == "blind", turn.reason


async def test_a_local_model_with_an_image_fails_once_with_a_sentence(
    fake: FakeProvider, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "data")
    catalog = local_catalog(fake)
    turn = await ask(store, catalog, "smollm2", [files(tmp_path)["shot.png"]])
    assert not turn.ok
    # No chat request, so no retries and no walk down a chain; the server was asked what
    # the model takes (/props, then Ollama's /api/show), once.
    assert [r.path for r in fake.requests] == ["/local/api/show"]
    (attempt,) = turn.attempts
    assert attempt.outcome is Outcome.SKIPPED
    assert turn.reason == "cannot see images"  # the words of what to pick are the app's
    notice = failure_notice(catalog, "smollm2", turn.attempts)
    assert "smollm2 cannot see images; /model " in notice
    # The message is kept whatever happened.
    (journal,) = store.open_sessions()
    assert journal.messages[-1]["attachments"][0]["name"] == "shot.png"


async def test_a_local_model_its_server_says_sees_gets_the_image(
    fake: FakeProvider, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "data")
    fake.vision = True  # llama-server's /props: "modalities": {"vision": true}
    turn = await ask(store, local_catalog(fake), "smollm2", [files(tmp_path)["shot.png"]])
    assert turn.ok, turn.reason
    assert last_user_content(fake.requests[0].body)[1]["type"] == "image_url"


async def test_an_earlier_image_is_a_mention_to_a_model_that_cannot_see(
    fake: FakeProvider, tmp_path: Path
) -> None:
    store = MemoryStore(tmp_path / "data")
    found = files(tmp_path)
    earlier = {
        "role": "user",
        "content": "Look at this",
        "attachments": [keep(store, found["shot.png"])],
    }
    answered = {"role": "assistant", "content": "A red square."}
    turn = await ask(
        store, local_catalog(fake), "smollm2", [found["notes.txt"]], [earlier, answered]
    )
    assert turn.ok, turn.reason
    (request,) = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    first = next(m for m in request.body["messages"] if m["role"] == "user")["content"]
    assert [p["type"] for p in first] == ["text", "text"]
    assert first[1]["text"].startswith("[attached: shot.png, ")
    assert "image_url" not in str(request.body)


async def test_a_kept_file_removed_by_hand_is_said_not_sent(
    fake: FakeProvider, tmp_path: Path
) -> None:
    from memory.chat.attachments import stored_path

    store = MemoryStore(tmp_path / "data")
    found = files(tmp_path)
    record = keep(store, found["shot.png"])
    stored_path(store, record).unlink()
    earlier = {"role": "user", "content": "Look", "attachments": [record]}
    answered = {"role": "assistant", "content": "A red square."}
    turn = await ask(
        store, fake_catalog(fake), "gpt-4.1-mini", [found["notes.txt"]], [earlier, answered]
    )
    assert turn.ok, turn.reason
    first = next(m for m in fake.requests[0].body["messages"] if m["role"] == "user")["content"]
    assert first[1]["text"] == "[attached: shot.png, 73 bytes] (the file is no longer in Kept)"


async def test_consolidation_gets_a_mention_not_the_payload(
    fake: FakeProvider, tmp_path: Path
) -> None:
    import json

    from memory import consolidate_pending
    from tests.fakes.provider import text
    from tests.support import nothing_new, pending_session

    store = MemoryStore(tmp_path / "data")
    found = files(tmp_path)
    records = [keep(store, found["report.pdf"]), keep(store, found["notes.txt"])]
    messages: list[Message] = [
        {"role": "user", "content": "Summarise my report", "attachments": records},
        {"role": "assistant", "content": "Revenue rose.", "model": "gpt-4.1-mini"},
    ]
    pending_session(store, messages)
    fake.responder = lambda body: text(json.dumps(nothing_new()))
    (result,) = await consolidate_pending(store, local_catalog(fake))
    assert result.model == "smollm2", result
    sent = str(fake.requests[0].body["messages"])
    assert "Summarise my report [attached: report.pdf, 2 pages, " in sent
    assert "[attached: notes.txt, 36 bytes]" in sent
    assert "PERIWINKLE" not in sent and "nine percent" not in sent


async def test_gemini_gets_text_parts_and_inline_image_data(
    fake: FakeProvider, tmp_path: Path
) -> None:
    from catalog import KeyStore
    from catalog.config import CatalogConfig
    from tests.support import fake_keys

    store = MemoryStore(tmp_path / "data")
    found = files(tmp_path)
    catalog = Catalog(
        MODEL_CATALOG,
        CatalogConfig(gateway_urls={"gemini": fake.base_url("gemini")}),
        KeyStore(environ={**fake_keys(), "GEMINI_API_KEY": "gemini-test-key-0123456789"}),
    )
    turn = await ask(store, catalog, "gemini-2.5-flash", [found["report.pdf"], found["shot.png"]])
    assert turn.ok and turn.text == "Hello from the fake provider.", turn.reason
    (request,) = fake.requests
    assert request.gateway == "gemini" and request.model == "gemini-2.5-flash"
    (user,) = [c for c in request.body["contents"] if c["role"] == "user"]
    parts = user["parts"]
    assert parts[0] == {"text": "What do these say?"}
    assert parts[1]["text"].startswith('<file name="report.pdf">')
    assert "Revenue rose nine percent" in parts[1]["text"]
    assert parts[2] == {
        "inline_data": {"data": base64.b64encode(png()).decode(), "mime_type": "image/png"}
    }


async def test_an_attachment_name_with_a_secret_is_redacted_before_consolidation(
    fake: FakeProvider, tmp_path: Path
) -> None:
    import json

    from memory import consolidate_pending
    from tests.fakes.provider import text
    from tests.support import nothing_new, pending_session

    store = MemoryStore(tmp_path / "data")
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"
    (tmp_path / f"{secret}.txt").write_text("token file\n")
    record = keep(store, read_attachment(tmp_path / f"{secret}.txt"))
    pending_session(store, [{"role": "user", "content": "What is this?", "attachments": [record]}])
    fake.responder = lambda body: text(json.dumps(nothing_new()))
    await consolidate_pending(store, local_catalog(fake))
    sent = str(fake.requests[0].body["messages"])
    assert "[attached: [redacted secret].txt, 11 bytes]" in sent
    assert secret not in sent
