"""Files shown to the model with a message: text and code, PDFs (as text), images.

An attachment is read whole, checked and measured once (`read_attachment`), stored in the
data folder by its content hash when its message is sent (`keep`), and named by a record in
the journal. The model sees the file's text or image (`expand`); memory sees only a mention
(`mention`). A file no journal names any more is deleted (`collect`).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import io
import os
import re
import stat
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.capabilities import sees_images
from catalog.catalog import Catalog
from memory.data.files import atomic_write, ensure_dir, fsync_dir
from memory.data.store import MemoryStore
from memory.sessions.marks import marked_open
from memory.settings import AttachmentLimits

__all__ = [
    "Attachment",
    "AttachmentError",
    "AttachmentLimits",
    "can_take",
    "collect",
    "does_not_fit",
    "expand",
    "keep",
    "mention",
    "read_attachment",
    "read_stdin_bytes",
    "vision_model_sentence",
]

FOLDER = "attachments"
PRIVATE = "private"  # attachments/private/: a private session's, gone with the session
IMAGE_TOKENS = 1_600  # about what one image costs at the providers' usual resizing
NO_TEXT_LAYER_SHOWN = 5  # pages named in a notice before "and N more"
# A file stored a moment ago may not be in its journal yet: `collect` leaves it this long.
COLLECT_GRACE = 600.0
# The most one PDF stream may inflate to (pypdf's own limit is 75 MB, and it cuts a page's
# text short there without a word): past it, the file is refused.
PDF_STREAM_MAX = 20_000_000
_FILTERS = ("zlib", "lzw", "run_length", "jbig2", "brotli", "array_based_stream")

_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_DIGEST = re.compile(rb'"sha256":\s*"([0-9a-f]{64})"')
_HEX64 = re.compile(r"[0-9a-f]{64}")


class AttachmentError(ValueError):
    """A file that cannot be attached: str() is one sentence for the user, naming it."""


@dataclass(frozen=True)
class Attachment:
    """A file read and measured, ready to be shown to the model and kept."""

    name: str
    kind: str  # "text" | "pdf" | "image"
    media_type: str
    size: int
    digest: str  # sha256 of `data`, hex
    tokens: int  # an estimate
    pages: int | None = None
    notices: tuple[str, ...] = ()
    text: str | None = None  # what the model reads (text, pdf); None for an image
    data: bytes = field(default=b"", repr=False)

    def label(self) -> str:
        """`report.pdf · 12 pages · 31 KB · ~8,100 tokens`"""
        parts = [self.name]
        if self.pages is not None:
            parts.append(f"{self.pages} page{'s' if self.pages != 1 else ''}")
        parts += [human_size(self.size), f"~{_round_tokens(self.tokens):,} tokens"]
        return " · ".join(parts)

    def record(self, *, private: bool = False) -> dict[str, Any]:
        """What a journal message stores in its "attachments" list."""
        record: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self.digest,
            "tokens": self.tokens,
        }
        if self.pages is not None:
            record["pages"] = self.pages
        if self.notices:
            record["notices"] = list(self.notices)
        if private:
            record["private"] = True
        return record


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes" if size != 1 else "1 byte"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _round_tokens(tokens: int) -> int:
    return tokens if tokens < 1_000 else round(tokens, -2)


# --- reading ---------------------------------------------------------------------------------


def read_attachment(path: Path, limits: AttachmentLimits | None = None) -> Attachment:
    """Read and measure the file at `path`. Raises AttachmentError, one sentence naming
    the file, for anything that cannot be attached: a folder, a pipe or device (never
    waited on), a link loop, a file over its kind's limit (refused before it is read), a
    file that changed while it was read, binary data, a damaged or locked PDF."""
    limits = limits or AttachmentLimits()
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer that never comes.
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except OSError as exc:
        raise AttachmentError(_cannot_open(shown, exc)) from None
    try:
        before = os.fstat(fd)
        if stat.S_ISDIR(before.st_mode):
            raise AttachmentError(f"{shown} is a folder; attach the files in it one by one.")
        if not stat.S_ISREG(before.st_mode):
            raise AttachmentError(
                f"{shown} is not a regular file (a pipe, socket or device); to attach what "
                "a command prints, pipe it to `kept ask -a -`."
            )
        # Its first bytes say its kind, and so its limit: a file past it is never read.
        head = os.read(fd, 16)
        os.lseek(fd, 0, os.SEEK_SET)
        _check_size(head, before.st_size, shown, limits)
        data = _read_exactly(fd, before.st_size, shown)
        after = os.fstat(fd)
    except OSError as exc:
        raise AttachmentError(_cannot_open(shown, exc)) from None
    finally:
        os.close(fd)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        raise AttachmentError(_changed(shown))
    return _measure(data, path.name, shown, limits)


def read_stdin_bytes(
    data: bytes, name: str = "stdin", limits: AttachmentLimits | None = None
) -> Attachment:
    """An attachment from bytes already read (`kept ask -a -`), named `name`."""
    limits = limits or AttachmentLimits()
    return _measure(data, name, name, limits)


def _read_exactly(fd: int, size: int, shown: str) -> bytes:
    """`size` bytes, and proof there is no more: a file that grew or shrank while it was
    read (a log being written) is refused rather than attached half-written."""
    chunks = []
    left = size + 1  # one byte past the size it had: more means it grew
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) != size:
        raise AttachmentError(_changed(shown))
    return data


def _changed(shown: str) -> str:
    return f"{shown} changed while Kept read it; attach it again once it is written."


def _cannot_open(shown: str, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return f"{shown} is a symbolic link that leads back to itself; attach the file it means."
    if exc.errno == errno.ENOENT:
        return f"{shown} does not exist; check the path (Tab completes it in the chat)."
    if exc.errno == errno.EACCES:
        return f"{shown} cannot be read (permission denied); change its mode or copy it."
    if exc.errno == errno.EISDIR:
        return f"{shown} is a folder; attach the files in it one by one."
    return f"{shown} cannot be read ({exc.strerror or exc}); check the path."


def _too_large(shown: str, size: int, limit: int, what: str) -> str:
    return (
        f"{shown} is {human_size(size)}, more than the {human_size(limit)} Kept attaches for "
        f"{what}; attach a part of it, or raise the limit in config.toml's [attachments]."
    )


def _check_size(head: bytes, size: int, shown: str, limits: AttachmentLimits) -> None:
    """Raise when a file that begins with `head` is past the limit of its kind."""
    if _image_type(head) is not None:
        limit, what = limits.image_max_bytes, "an image"
    elif head.startswith(b"%PDF-"):
        limit, what = limits.pdf_max_bytes, "a PDF"
    else:
        limit, what = limits.text_max_bytes, "text"
    if size > limit:
        raise AttachmentError(_too_large(shown, size, limit, what))


def _measure(data: bytes, name: str, shown: str, limits: AttachmentLimits) -> Attachment:
    _check_size(data[:16], len(data), shown, limits)
    digest = hashlib.sha256(data).hexdigest()
    image = _image_type(data)
    if image is not None:
        return Attachment(name, "image", image, len(data), digest, IMAGE_TOKENS, data=data)
    if data.startswith(b"%PDF-"):
        text, pages, notices = _pdf_text(data, name, shown, limits)
        return Attachment(
            name, "pdf", "application/pdf", len(data), digest, _tokens(text), pages, notices,
            text, data,
        )  # fmt: skip
    decoded = decode_text(data)
    if decoded is None:
        raise AttachmentError(
            f"{shown} looks binary, not text, a PDF or a PNG, JPEG, WebP or GIF image; "
            "Kept cannot attach it."
        )
    return Attachment(
        name, "text", "text/plain", len(data), digest, _tokens(decoded), text=decoded, data=data
    )


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def _image_type(data: bytes) -> str | None:
    for magic, media_type in _IMAGES:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")


def decode_text(data: bytes) -> str | None:
    """The text of `data`: UTF-8 (with or without a BOM), UTF-16 with its BOM, else
    Latin-1; None when it is binary (a NUL byte, or control characters no text has)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    elif b"\x00" in data:
        return None
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    controls = len(_CONTROL.findall(text))
    return None if controls > max(8, len(text) // 100) else text


def _pdf_text(
    data: bytes, name: str, shown: str, limits: AttachmentLimits
) -> tuple[str, int, tuple[str, ...]]:
    """A PDF's text, page by page, its page count and a notice for pages without text."""
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError

    try:
        bounds: dict[str, Any] = {f"{f}_maximum_output_length": PDF_STREAM_MAX for f in _FILTERS}
        with apply_configuration(**bounds):
            return _pdf_pages(PdfReader(io.BytesIO(data)), name, shown, limits)
    except AttachmentError:
        raise
    except (FileNotDecryptedError, DependencyError, NotImplementedError):
        raise AttachmentError(
            f"{shown} is an encrypted PDF; save a copy without a password and attach that."
        ) from None
    except (LimitReachedError, MemoryError, RecursionError):
        raise AttachmentError(
            f"{shown} expands to far more than its size (a PDF bomb?); Kept does not read it."
        ) from None
    except Exception as exc:  # pypdf raises many kinds for a damaged or hostile file
        raise AttachmentError(
            f"{shown} could not be read as a PDF ({type(exc).__name__}); it may be damaged."
        ) from None


def _pdf_pages(
    reader: Any, name: str, shown: str, limits: AttachmentLimits
) -> tuple[str, int, tuple[str, ...]]:
    from pypdf.errors import FileNotDecryptedError

    if reader.is_encrypted and not reader.decrypt(""):
        raise FileNotDecryptedError
    pages = len(reader.pages)
    if pages > limits.pdf_max_pages:
        raise AttachmentError(
            f"{shown} has {pages:,} pages, more than the {limits.pdf_max_pages:,} Kept "
            "attaches; attach a part of it, or raise pdf_max_pages in [attachments]."
        )
    parts: list[str] = []
    blank: list[int] = []
    total = 0
    for number, page in enumerate(reader.pages, 1):
        contents = page.get_contents()
        if contents is not None:
            contents.get_data()  # raises at a bomb, which extract_text would only log
        words = (page.extract_text() or "").strip()
        if not words:
            blank.append(number)
            continue
        total += len(words)
        if total > limits.text_max_bytes:
            raise AttachmentError(
                f"{shown} holds more text than the {human_size(limits.text_max_bytes)} "
                "Kept attaches; attach a part of it, or raise text_max_bytes in "
                "[attachments]."
            )
        parts.append(f"--- page {number} ---\n{words}")
    return "\n\n".join(parts), pages, _no_text_notices(blank, pages, name)


def _no_text_notices(blank: list[int], pages: int, name: str) -> tuple[str, ...]:
    if not blank:
        return ()
    if len(blank) == pages:
        return (f"{name} has no text layer (a scan?): the model sees only its name.",)
    if len(blank) == 1:
        return (f"page {blank[0]} of {name} has no text layer.",)
    named = ", ".join(str(n) for n in blank[:NO_TEXT_LAYER_SHOWN])
    more = len(blank) - NO_TEXT_LAYER_SHOWN
    return (
        f"pages {named}{f' and {more} more' if more > 0 else ''} of {name} have no text layer.",
    )


# --- before sending --------------------------------------------------------------------------


def does_not_fit(attachments: Sequence[Attachment], text: str, window: int) -> str | None:
    """One sentence, with what to do, when the message and its attachments are estimated to
    need more than the model's window (a tenth of it stays for the prompt and the reply);
    None when they fit."""
    need = sum(a.tokens for a in attachments) + _tokens(text)
    room = window - window // 10
    if need <= room:
        return None
    largest = max(attachments, key=lambda a: a.tokens, default=None)
    what = "" if largest is None else f" ({largest.name} is ~{_round_tokens(largest.tokens):,})"
    return (
        f"This message is about {_round_tokens(need):,} tokens{what}, more than the model "
        f"can read ({window:,}-token window); detach a file or attach a part of it, or pick "
        "a model with a larger window with /model."
    )


def can_take(model_id: str, kinds: set[str], catalog: Catalog) -> bool:
    """Whether `model_id` can be sent a message with attachments of these kinds: text and
    PDFs go to every model (as text); images only to one that sees them."""
    if "image" not in kinds:
        return True
    if model_id not in catalog:
        return False
    return sees_images(catalog, catalog.get(model_id))


def vision_model_sentence(catalog: Catalog, model_id: str | None = None) -> str:
    """`GPT-OSS 120B cannot see images; /model claude-sonnet-4-5 can.` A model with a key
    is named first."""
    who = (
        catalog.get(model_id).label
        if model_id is not None and model_id in catalog
        else model_id or "This model"
    )
    seeing = [e for e in catalog.visible() if sees_images(catalog, e, ask_server=False)]
    ready = [e for e in seeing if catalog.route(e).problem is None]
    if ready:
        return f"{who} cannot see images; /model {ready[0].id} can."
    if seeing:
        return f"{who} cannot see images; /model {seeing[0].id} can, once /keys has its key."
    return f"{who} cannot see images, and no model Kept knows can; detach the image."


# --- storing ---------------------------------------------------------------------------------


def stored_path(store: MemoryStore | Path, record: dict[str, Any]) -> Path:
    """Where a record's file is kept in the data folder (a store, or its root)."""
    folder = (store if isinstance(store, Path) else store.root) / FOLDER
    if record.get("private") is True:
        folder = folder / PRIVATE
    return folder / str(record.get("sha256", ""))


def keep(store: MemoryStore, attachment: Attachment, *, private: bool = False) -> dict[str, Any]:
    """Copy the attachment into the data folder by content hash (atomically; a file kept
    before is not written again) and return the record its journal message stores. A
    private session's attachments are kept apart and deleted with it (`collect`)."""
    record = attachment.record(private=private)
    path = stored_path(store, record)
    ensure_dir(path.parent)
    _remember_text(attachment.digest, attachment.text)
    try:
        if path.stat().st_size == attachment.size:
            os.utime(path)  # `collect` spares it: its message is about to name it
            return record
    except FileNotFoundError:
        pass
    atomic_write(path, attachment.data)
    return record


def _holds_files(folder: Path) -> bool:
    try:
        return any(_HEX64.fullmatch(entry.name) for entry in os.scandir(folder))
    except OSError:
        return False


def forget_private(store: MemoryStore) -> int:
    """Delete the kept files of private sessions that ended: nothing of them is kept."""
    return collect(store, grace=0, private_only=True)


def _naming(store: MemoryStore, private_only: bool) -> list[Path]:
    """The journals that may name a kept file. A private session's are named only by its
    journal, which keeps its open mark until it is deleted: those few, not every journal."""
    if private_only:
        try:
            return marked_open(store.sessions_dir)
        except OSError:
            pass  # marks that cannot be made here: every journal is read instead
    return [*store.sessions_dir.glob("*.jsonl"), *store.done_dir.glob("*.jsonl")]


def collect(store: MemoryStore, *, grace: float = COLLECT_GRACE, private_only: bool = False) -> int:
    """Delete every kept attachment no session journal names any more (a deleted session's,
    an ended private session's); one stored in the last `grace` seconds is spared, since its
    message may not be journaled yet. With `private_only`, only private sessions' files are
    looked at. Returns how many were deleted."""
    folder = store.root / FOLDER
    subs = (folder / PRIVATE,) if private_only else (folder, folder / PRIVATE)
    if not any(_holds_files(s) for s in subs):
        return 0  # nothing kept: no journal need be read (the common case)
    named: set[str] = set()
    # A private session's files are named only by its journal, which stays open (marked)
    # until it is deleted: those few are read, not every journal.
    for journal in _naming(store, private_only):
        try:
            named.update(m.decode() for m in _DIGEST.findall(journal.read_bytes()))
        except FileNotFoundError:
            continue  # deleted since it was listed: it names nothing now
        except OSError:
            return 0  # a journal that cannot be read may name any of them: delete nothing
    deleted = 0
    now = time.time()
    for sub in subs:
        if not sub.is_dir():
            continue
        for path in sub.iterdir():
            if path.name in named or not _HEX64.fullmatch(path.name):
                continue
            try:
                if now - path.stat().st_mtime < grace:
                    continue
                path.unlink()
                deleted += 1
            except OSError:
                continue
        if deleted:
            fsync_dir(sub)
    return deleted


# --- what the model and memory see -----------------------------------------------------------

_TEXT_CACHE_CHARS = 20_000_000
_text_cache: OrderedDict[str, str] = OrderedDict()


def _remember_text(digest: str, text: str | None) -> None:
    """Keep a PDF's extracted text in this process: each turn sends it again, and pypdf
    takes a while on a long document."""
    if text is None:
        return
    _text_cache[digest] = text
    _text_cache.move_to_end(digest)
    while sum(len(t) for t in _text_cache.values()) > _TEXT_CACHE_CHARS and len(_text_cache) > 1:
        _text_cache.popitem(last=False)


def _stored_text(store: MemoryStore, record: dict[str, Any]) -> str:
    digest = str(record.get("sha256", ""))
    if digest in _text_cache:
        return _text_cache[digest]
    data = stored_path(store, record).read_bytes()
    name = str(record.get("name", "file"))
    if record.get("kind") == "pdf":
        text, _, _ = _pdf_text(data, name, name, AttachmentLimits(10**10, 10**10, 10**6, 10**10))
    else:
        text = decode_text(data) or ""
    _remember_text(digest, text)
    return text


def display_name(record: dict[str, Any]) -> str:
    """A record's file name on one line, without quotes: a journal may be edited by hand,
    and the name goes into prompts."""
    return " ".join(str(record.get("name") or "file").replace('"', "'").split())[:200]


def mention(record: dict[str, Any]) -> str:
    """`[attached: report.pdf, 12 pages, 31 KB]`: what memory sees instead of the file."""
    parts = [display_name(record)]
    pages = record.get("pages")
    if isinstance(pages, int):
        parts.append(f"{pages} page{'s' if pages != 1 else ''}")
    size = record.get("size")
    if isinstance(size, int):
        parts.append(human_size(size))
    return f"[attached: {', '.join(parts)}]"


def records_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A journal message's attachment records (none for a damaged or hand-edited list)."""
    found = message.get("attachments")
    if not isinstance(found, list):
        return []
    # The digest names a file in the data folder: nothing else may (a hand edit, "../x").
    return [r for r in found if isinstance(r, dict) and _HEX64.fullmatch(str(r.get("sha256")))]


def kinds_of(messages: Iterable[dict[str, Any]]) -> set[str]:
    return {str(r.get("kind")) for m in messages for r in records_of(m)}


def expand(
    store: MemoryStore, message: dict[str, Any], sent: dict[str, Any], *, images: bool = True
) -> dict[str, Any]:
    """`sent` (the context's form of journal `message`) with its attachments as content
    parts: each text or PDF a text block naming the file, each image an image_url part
    with a data URL (litellm turns both into each provider's own form). Without `images`,
    an image is a mention: the model asked cannot see it."""
    records = records_of(message)
    if not records:
        return sent
    parts: list[dict[str, Any]] = []
    if sent.get("content"):
        parts.append({"type": "text", "text": str(sent["content"])})
    for record in records:
        name = display_name(record)
        try:
            if record.get("kind") == "image":
                if not images:
                    parts.append({"type": "text", "text": f"{mention(record)} (not shown)"})
                    continue
                data = stored_path(store, record).read_bytes()
                url = f"data:{record.get('media_type')};base64,{base64.b64encode(data).decode()}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
                continue
            body = _stored_text(store, record)
        except (OSError, AttachmentError):
            parts.append(
                {"type": "text", "text": f"{mention(record)} (the file is no longer in Kept)"}
            )
            continue
        parts.append({"type": "text", "text": f'<file name="{name}">\n{body}\n</file>'})
    return {**sent, "content": parts}
