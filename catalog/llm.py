"""litellm, loaded on first use and configured for a machine that may be offline."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
import time
from collections.abc import Iterator
from functools import cache
from types import ModuleType

_streams = 0  # streams being read now
_threshold = gc.get_threshold()  # the collector's thresholds before the first of them
# Seconds a full collection is held at most: the garbage that waits for it grows with the
# time a stream takes (a long reply at a slow model's pace), one collection bounds it.
HOLD_AT_MOST = 15.0
_held_since = 0.0


@cache
def litellm() -> ModuleType:
    """Import litellm once, with its network side effects switched off."""
    # Without these, the import tries to download the price map, and the first streamed
    # groq/ call tries to download a tokenizer (about 24 s blocked when offline).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import litellm as module

    module.suppress_debug_info = True
    module.telemetry = False
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # The import leaves about 370,000 objects that live as long as the process. Left to
    # the collector, every full collection walks them all again (0.7 s here), and a long
    # streamed reply, whose chunks litellm keeps, sets off several: the screen froze for
    # as long each time. Frozen, a full collection walks only what came after.
    gc.freeze()
    return module


def is_loaded() -> bool:
    return "litellm" in sys.modules


@contextlib.contextmanager
def full_collections_held() -> Iterator[None]:
    """While a stream is read, the collector's full collections wait (the young ones go
    on): litellm keeps every chunk of a stream, a dozen objects each, and each time they
    have grown by a quarter a full collection walks them all again, 0.1-0.4 s of a frozen
    screen at a time, a score of times in a long reply. The one held collection comes once
    the stream is let go, and with it litellm's chunks."""
    global _streams, _threshold, _held_since
    if _streams == 0:
        _threshold = gc.get_threshold()
        _held_since = time.monotonic()
        gc.set_threshold(_threshold[0], _threshold[1], 2**31 - 1)
    _streams += 1
    try:
        yield
    finally:
        _streams -= 1
        if _streams == 0:
            gc.set_threshold(*_threshold)


def full_collection_if_due() -> None:
    """Run the held full collection if it has been held HOLD_AT_MOST: one pause then, not
    the garbage of a whole long stream kept."""
    global _held_since
    if _streams and time.monotonic() - _held_since >= HOLD_AT_MOST:
        gc.collect()
        _held_since = time.monotonic()
