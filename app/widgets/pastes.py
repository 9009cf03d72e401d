"""What the composer knows of pastes: text that arrived by paste or a dropped file's path,
and where it stands in the text sent, however edited since (memory.message's `pasted`
spans: memory learns only from what the user typed)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

# What is left of an edited paste is looked for down to pieces this long, and pieces
# shorter than a seed only once some of the paste was found: a short one turns up by
# chance in any text, and a gap that is not pasted would cut the user's own words apart.
SMALLEST_PIECE = 8
SEED = 32  # the piece of a paste looked for first, then grown while paste and text agree
# Characters scanned at Enter looking for pastes (a few hundredths of a second): a
# megabyte pasted and then cut to pieces is found as far as this allows.
SCAN_BUDGET = 100_000_000
FEWEST_LOOKS, MOST_LOOKS = 64, 2000


@dataclass(frozen=True)
class Paste:
    """Text that arrived by paste (a dropped file's path too), not typed, and the offset it
    went in at: memory learns only from what the user typed."""

    text: str
    at: int


class Remnants:
    """Finds pastes again in the text sent, however edited since: the middle of each is
    looked for nearest where it should be (the same words may also be typed elsewhere),
    grown while paste and text agree, and what is left on either side looked for the same
    way; a piece whose middle is not there is halved. The searches are counted: a huge
    paste cut to pieces costs at most `SCAN_BUDGET` characters scanned."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.looks = min(MOST_LOOKS, max(FEWEST_LOOKS, SCAN_BUDGET // max(1, len(text))))

    def spans(self, paste: Paste) -> list[tuple[int, int]]:
        """Where `paste`, or what is left of it, stands in the text."""
        found: list[tuple[int, int]] = []
        covered: list[tuple[int, int]] = []  # the parts of the paste found, in the paste
        # Pieces of the paste to look for, the longest first: (-length, start, where the
        # text should have it).
        todo = [(-len(paste.text), 0, paste.at)]
        while todo and self.looks > 0:
            length, start, near = heapq.heappop(todo)
            end = start - length
            if not found and end - start < min(SEED, len(paste.text) // 2):
                break  # nothing of it is left: what is still to look for is too short to tell
            if any(a <= start and end <= b for a, b in covered):
                continue
            match = self.match(paste.text, start, end, near)
            if match is None:
                pieces = _halves(start, end, near)
            else:
                (first, last), (at, to) = match
                covered.append((first, last))
                found.append((at, to))
                pieces = [(start, first, at - (first - start)), (last, end, to)]
            for first, last, where in pieces:
                if last - first >= SMALLEST_PIECE:
                    heapq.heappush(todo, (first - last, first, where))
        return found

    def match(
        self, paste: str, start: int, end: int, near: int
    ) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The run of `paste` around the middle of `paste[start:end]` that the text has,
        as (its span in the paste, its span in the text); None if that middle is not there."""
        size = min(SEED, end - start)
        seed = start + (end - start - size) // 2
        at = self.nearest(paste[seed : seed + size], near + seed - start)
        if at is None:
            return None
        left = _agreeing(paste, seed, self.text, at, backward=True)
        right = _agreeing(paste, seed, self.text, at, backward=False)
        return (seed - left, seed + right), (at - left, at + right)

    def nearest(self, piece: str, near: int) -> int | None:
        """The start of the occurrence of `piece` closest to offset `near`, if any."""
        self.looks -= 2
        after = self.text.find(piece, max(0, near))
        before = self.text.rfind(piece, 0, max(0, near) + len(piece))
        found = [i for i in (after, before) if i >= 0]
        return min(found, key=lambda i: abs(i - near)) if found else None


def _halves(start: int, end: int, near: int) -> list[tuple[int, int, int]]:
    """A piece not found, as two to look for (start, end, where the text should have it):
    its halves, each at least `SMALLEST_PIECE` long (they overlap when it is short)."""
    if end - start <= SMALLEST_PIECE:
        return []
    middle = (start + end) // 2
    left, right = max(start + SMALLEST_PIECE, middle), min(end - SMALLEST_PIECE, middle)
    return [(start, left, near), (right, end, near + right - start)]


def _agreeing(a: str, i: int, b: str, j: int, *, backward: bool) -> int:
    """How many characters `a` and `b` have in common on from `a[i]` and `b[j]` (or back
    from just before them): slices compared at C speed, twice as long each time until they
    differ, then halved, so that a short run costs little however long the texts are."""
    limit = min(i, j) if backward else min(len(a) - i, len(b) - j)

    def same(size: int) -> bool:
        if backward:
            return a[i - size : i] == b[j - size : j]
        return a[i : i + size] == b[j : j + size]

    low, high = 0, 1
    while high <= limit and same(high):
        low, high = high, high * 2
    high = min(high, limit + 1)  # the first length known not to agree
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if same(middle) else (low, middle)
    return low
