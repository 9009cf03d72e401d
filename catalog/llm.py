"""litellm, loaded on first use and configured for a machine that may be offline."""

from __future__ import annotations

import gc
import logging
import os
import sys
from functools import cache
from types import ModuleType


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
