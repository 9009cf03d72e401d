"""Files shown to the model with a message: text and code, PDFs (as text), images.

An attachment is read whole, checked and measured once (`read_attachment`, in `reading`),
stored in the data folder by its content hash when its message is sent (`keep`, in
`storage`), and named by a record in the journal. The model sees the file's text or image
(`expand`, in `seen`); memory sees only a mention (`mention`). A file no journal names any
more is deleted (`collect`). Whether a message fits a model, and which models see images,
is in `sending`: facts the app words.
"""

from __future__ import annotations

from memory.chat.attachments.kinds import FOLDER, PRIVATE, Attachment, AttachmentError, human_size
from memory.chat.attachments.reading import decode_text, read_attachment, read_stdin_bytes
from memory.chat.attachments.seen import display_name, expand, kinds_of, mention, records_of
from memory.chat.attachments.sending import NO_IMAGES, Seeing, TooBig, can_take, seeing, too_big
from memory.chat.attachments.storage import collect, forget_private, keep, stored_path
from memory.settings import AttachmentLimits

__all__ = [
    "FOLDER",
    "NO_IMAGES",
    "PRIVATE",
    "Attachment",
    "AttachmentError",
    "AttachmentLimits",
    "Seeing",
    "TooBig",
    "can_take",
    "collect",
    "decode_text",
    "display_name",
    "expand",
    "forget_private",
    "human_size",
    "keep",
    "kinds_of",
    "mention",
    "read_attachment",
    "read_stdin_bytes",
    "records_of",
    "seeing",
    "stored_path",
    "too_big",
]
