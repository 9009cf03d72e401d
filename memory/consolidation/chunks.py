"""A session's transcript cut into parts that fit one request, and the token budgets that
decide the cut: what the memory, the reply and the model's window leave for the transcript."""

from __future__ import annotations

from collections.abc import Callable

from catalog import Catalog, Chain
from memory.settings import MemorySettings

# Tokens a save_memory reply may take: a paragraph and a score of one-line edits (never
# the whole memory). A small model that rambles is cut off early; a session that teaches
# more than that is cut into parts (a cut-off reply is asked again with smaller parts).
REPLY_TOKENS = 1_000


def count_tokens(text: str) -> int:
    from catalog.llm import litellm

    return int(litellm().token_counter(model="gpt-4o", text=text))


def _split_long(block: str, budget_tokens: int) -> list[str]:
    """A single message too large for one request, cut at line breaks (or hard)."""
    size = max(1000, budget_tokens * 3)  # characters: ~3+ per token in most languages
    pieces, rest = [], block
    while len(rest) > size:
        cut = rest.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else size
        pieces.append(rest[:cut])
        rest = rest[cut:]
    return [*pieces, rest]


def chunk_transcript(
    blocks: list[str], budget_tokens: int, count: Callable[[str], int] = count_tokens
) -> list[str]:
    """Group transcript blocks into as few parts as fit within `budget_tokens` each."""
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for block in blocks:
        # A block many times the budget is cut without counting it whole first: counting
        # a huge message holds the interpreter for seconds and needs no exact answer.
        tokens = count(block) if len(block) <= budget_tokens * 8 else budget_tokens + 1
        pieces = [block] if tokens <= budget_tokens else _split_long(block, budget_tokens)
        for piece in pieces:
            size = tokens if len(pieces) == 1 else count(piece)
            if current and used + size > budget_tokens:
                chunks.append("\n\n".join(current))
                current, used = [], 0
            current.append(piece)
            used += size
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def reply_budget(settings: MemorySettings) -> int:
    """Tokens a save_memory reply may need: the history entry and the edits."""
    return min(REPLY_TOKENS, settings.history_entry_max_chars // 3 + 400)


def rewrite_budget(settings: MemorySettings, memory_text: str) -> int:
    """Tokens a whole-file rewrite of the memory may need: the new memory and a sentence."""
    memory_tokens = count_tokens(memory_text) if memory_text else 0
    most = (settings.memory_max_chars + settings.history_entry_max_chars) // 3
    return min(int(memory_tokens * 1.5) + 1_000, most)


def transcript_budget(
    catalog: Catalog, chain: Chain, settings: MemorySettings, memory_text: str, shrink: int = 0
) -> int:
    """Tokens of transcript one request may carry on the chain's first model, halved
    `shrink` times after a model ran out of context."""
    head = chain.models[0] if chain.models else None
    pricing = catalog.pricing(head) if head is not None else None
    window = pricing.context_window if pricing and pricing.context_window else 32_000
    memory_tokens = count_tokens(memory_text) if memory_text else 0
    reserved = 500 + memory_tokens + reply_budget(settings)
    return max(300, int(window * 0.9) - reserved) >> shrink


def context_window(catalog: Catalog, model: str) -> int | None:
    """The window of the model that answered, when the catalog knows it."""
    pricing = catalog.pricing(catalog.get(model)) if model in catalog else None
    return pricing.context_window if pricing else None
