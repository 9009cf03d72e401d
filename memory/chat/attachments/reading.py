"""Reading a file to attach: checked and measured once, its kind from its first bytes,
refused in one sentence naming it; a PDF read as text, page by page."""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
from pathlib import Path
from typing import Any

from memory.chat.attachments.kinds import (
    IMAGE_TOKENS,
    Attachment,
    AttachmentError,
    human_size,
    text_tokens,
)
from memory.settings import AttachmentLimits

NO_TEXT_LAYER_SHOWN = 5  # pages named in a notice before "and N more"
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
        text, pages, notices = pdf_text(data, name, shown, limits)
        return Attachment(
            name, "pdf", "application/pdf", len(data), digest, text_tokens(text), pages, notices,
            text, data,
        )  # fmt: skip
    decoded = decode_text(data)
    if decoded is None:
        raise AttachmentError(
            f"{shown} looks binary, not text, a PDF or a PNG, JPEG, WebP or GIF image; "
            "Kept cannot attach it."
        )
    return Attachment(
        name, "text", "text/plain", len(data), digest, text_tokens(decoded), text=decoded, data=data
    )


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


def pdf_text(
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
