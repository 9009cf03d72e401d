"""The pure merges of sync: two devices' versions of a file and the last one both saw.

MEMORY.md and INSTRUCTIONS.md merge as lines, three ways (diff3, on difflib's matches):
a region one side changed takes that change, the same change on both is taken once, and
lines both sides only inserted at the same place are all kept (ours, then theirs that
ours does not already hold). Where both changed the same base lines differently the
result keeps ours there and says so in a `Conflict`: memory is never silently replaced
by the other side; the caller shows both sides in a proposal.

HISTORY.md and its monthly archives merge as a union of entries on their keys
(memory.data.history): each entry once, in time order, a deletion on one side carried over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from memory.data.history import ENTRY_START, HistoryEntry, join_entries, parse_entries

Lines = tuple[str, ...]


@dataclass(frozen=True)
class Conflict:
    """Base lines both sides changed, and what each side made of them (no newlines)."""

    base: Lines
    ours: Lines
    theirs: Lines


@dataclass(frozen=True)
class LineMerge:
    """A merged text; where it holds our side of a region both sides changed, a conflict."""

    text: str
    conflicts: tuple[Conflict, ...]

    @property
    def clean(self) -> bool:
        return not self.conflicts


def merge_lines(base: str, ours: str, theirs: str) -> LineMerge:
    """Three-way merge of the lines of `ours` and `theirs` since `base` ("\\r\\n" is "\\n")."""
    (b, b_end), (o, o_end), (t, t_end) = _split(base), _split(ours), _split(theirs)
    merged: list[str] = []
    conflicts: list[Conflict] = []
    i = j = k = 0
    for b0, b1, o0, o1, t0, t1 in _stable_regions(b, o, t):
        chunk, conflict = _merge_chunk(b[i:b0], o[j:o0], t[k:t0])
        merged.extend(chunk)
        if conflict:
            conflicts.append(conflict)
        merged.extend(b[b0:b1])
        i, j, k = b1, o1, t1
    # A final newline if either side has one; a side left as it was gives the other exactly.
    if (o, o_end) == (b, b_end):
        ends = t_end
    elif (t, t_end) == (b, b_end):
        ends = o_end
    else:
        ends = o_end or t_end
    text = "\n".join(merged) + ("\n" if ends and merged else "")
    return LineMerge(text, tuple(conflicts))


def _split(text: str) -> tuple[Lines, bool]:
    """The lines of a text, and whether it ends with a newline. Only "\\n" breaks a line:
    str.splitlines would also break on form feeds and Unicode separators inside one."""
    text = text.replace("\r\n", "\n")
    if not text:
        return (), False
    ends = text.endswith("\n")
    return tuple((text[:-1] if ends else text).split("\n")), ends


def _stable_regions(
    base: Lines, ours: Lines, theirs: Lines
) -> list[tuple[int, int, int, int, int, int]]:
    """Runs of base lines both sides kept in place, as (base, ours, theirs) start-end
    ranges, ending with an empty run at the three ends."""
    to_ours = SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()[:-1]
    to_theirs = SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()[:-1]
    regions: list[tuple[int, int, int, int, int, int]] = []
    x = y = 0
    while x < len(to_ours) and y < len(to_theirs):
        ob, oo, olen = to_ours[x]
        tb, tt, tlen = to_theirs[y]
        start, end = max(ob, tb), min(ob + olen, tb + tlen)
        if start < end:
            o0, t0 = oo + start - ob, tt + start - tb
            regions.append((start, end, o0, o0 + end - start, t0, t0 + end - start))
        if ob + olen < tb + tlen:
            x += 1
        else:
            y += 1
    regions.append((len(base), len(base), len(ours), len(ours), len(theirs), len(theirs)))
    return regions


def _merge_chunk(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]
) -> tuple[list[str], Conflict | None]:
    """One unstable region: the lines it merges to, and a conflict if both sides changed it."""
    if list(ours) == list(base):
        return list(theirs), None
    if list(theirs) == list(base) or list(theirs) == list(ours):
        return list(ours), None
    if not base:
        # Both only inserted here (both appended facts, the common case): keep all of them.
        have = {line.strip() for line in ours}
        return [*ours, *(line for line in theirs if line.strip() not in have)], None
    return list(ours), Conflict(tuple(base), tuple(ours), tuple(theirs))


def merge_history(base: str, ours: str, theirs: str) -> str:
    """HISTORY.md (or an archive month) merged as a union of entries on their keys.

    An entry either side has is kept once; one that base had and one side removed while the
    other kept it unchanged goes; if one side changed its text that text is taken, if both
    did, ours. Entries are in stamp order, ties in the order they appear (ours first).
    """
    path = Path("HISTORY.md")
    was = _by_key(parse_entries(base, path))
    mine = _by_key(parse_entries(ours, path))
    other = _by_key(parse_entries(theirs, path))
    chosen: list[HistoryEntry] = []
    for key in [*mine, *(key for key in other if key not in mine)]:
        entry = _merge_entry(was.get(key), mine.get(key), other.get(key))
        if entry is not None:
            chosen.append(entry)
    chosen.sort(key=lambda e: e.stamp)
    mine_pre, base_pre = _preamble(ours), _preamble(base)
    preamble = _preamble(theirs) if mine_pre == base_pre else mine_pre
    return (preamble + "\n\n" if preamble else "") + join_entries([e.text for e in chosen])


def _by_key(entries: list[HistoryEntry]) -> dict[str, HistoryEntry]:
    """Entries by key, the first of any repeated one (a union holds each entry once)."""
    found: dict[str, HistoryEntry] = {}
    for entry in entries:
        found.setdefault(entry.key, entry)
    return found


def _merge_entry(
    base: HistoryEntry | None, ours: HistoryEntry | None, theirs: HistoryEntry | None
) -> HistoryEntry | None:
    """One key's entry after the merge, or None when a side's deletion carries over."""
    if ours is None or theirs is None:
        kept = ours or theirs
        if base is not None and kept is not None and kept.text == base.text:
            return None  # deleted on one side, untouched on the other
        return kept
    if base is not None and ours.text == base.text:
        return theirs
    return ours


def _preamble(text: str) -> str:
    """What stands before the first entry (a heading the user added), without trailing space."""
    lines = text.replace("\r\n", "\n").splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if ENTRY_START.match(line)), len(lines))
    return "".join(lines[:first]).rstrip()
