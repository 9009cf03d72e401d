"""Sync's pure merges: MEMORY.md's lines three ways, HISTORY.md's entries as a union."""

from __future__ import annotations

import random
from pathlib import Path

from memory.data.history import HistoryEntry, join_entries, parse_entries
from memory.sync.merge import Conflict, LineMerge, merge_history, merge_lines

ROUNDS = 400


def lines(merge: LineMerge) -> list[str]:
    return merge.text.splitlines()


# --- MEMORY.md and INSTRUCTIONS.md: lines ---------------------------------------------------


def test_a_change_on_one_side_is_taken() -> None:
    base = "# Me\n- likes tea\n- lives in Porto\n"
    theirs = "# Me\n- likes green tea\n- lives in Porto\n"
    assert merge_lines(base, base, theirs) == LineMerge(theirs, ())
    assert merge_lines(base, theirs, base) == LineMerge(theirs, ())


def test_the_same_change_on_both_sides_is_taken_once() -> None:
    base = "a\nb\nc\n"
    both = "a\nB\nc\nd\n"
    assert merge_lines(base, both, both) == LineMerge(both, ())


def test_changes_to_separate_lines_both_land() -> None:
    base = "a\nb\nc\nd\ne\n"
    merged = merge_lines(base, "a\nB\nc\nd\ne\n", "a\nb\nc\nd\nE\n")
    assert merged == LineMerge("a\nB\nc\nd\nE\n", ())


def test_facts_both_sides_appended_are_all_kept_ours_first() -> None:
    base = "# Me\n- likes tea\n"
    ours = "# Me\n- likes tea\n- has a cat\n- plays cello\n"
    theirs = "# Me\n- likes tea\n  - plays cello  \n- reads at night\n"
    merged = merge_lines(base, ours, theirs)
    # Their "plays cello" is ours with other spaces: taken once, in our words.
    assert merged == LineMerge(
        "# Me\n- likes tea\n- has a cat\n- plays cello\n- reads at night\n", ()
    )
    assert merged.clean


def test_lines_both_inserted_in_the_middle_are_all_kept() -> None:
    merged = merge_lines("a\nz\n", "a\nb\nz\n", "a\nc\nz\n")
    assert merged == LineMerge("a\nb\nc\nz\n", ())


def test_the_same_lines_changed_differently_are_a_conflict_that_keeps_ours() -> None:
    base = "# Me\n- lives in Porto\n- likes tea\n"
    ours = "# Me\n- lives in Lisbon\n- likes tea\n"
    theirs = "# Me\n- lives in Berlin\n- likes tea\n"
    merged = merge_lines(base, ours, theirs)
    assert merged.text == ours
    assert not merged.clean
    assert merged.conflicts == (
        Conflict(("- lives in Porto",), ("- lives in Lisbon",), ("- lives in Berlin",)),
    )


def test_a_line_removed_on_one_side_and_changed_on_the_other_is_a_conflict() -> None:
    base = "a\nb\nc\n"
    merged = merge_lines(base, "a\nc\n", "a\nB\nc\n")
    assert merged.text == "a\nc\n"
    assert merged.conflicts == (Conflict(("b",), (), ("B",)),)


def test_the_final_newline_and_windows_line_endings() -> None:
    assert merge_lines("", "", "") == LineMerge("", ())
    assert merge_lines("a", "a", "a\nb").text == "a\nb"
    assert merge_lines("a\n", "a\nb\n", "a\n").text == "a\nb\n"
    assert merge_lines("a\r\nb\r\n", "a\r\nb\r\nc\r\n", "a\nb\n").text == "a\nb\nc\n"
    assert merge_lines("", "x\n", "").text == "x\n"
    # Both changed: a final newline if either has one (a hand edit often drops it).
    assert merge_lines("a\n", "a\nx", "a\ny\n").text == "a\nx\ny\n"
    assert merge_lines("a", "a\nx", "a\ny").text == "a\nx\ny"
    # One side left as it was: the other side, last newline or not.
    assert merge_lines("a\n", "a\n", "a").text == "a"


def test_a_line_is_only_broken_at_a_newline() -> None:
    # A form feed or a Unicode line separator inside a line is text, not a break.
    base = "a\x0cb\nc\u2028d\n"
    assert merge_lines(base, base + "e\n", base).text == base + "e\n"


# --- property-style: random edits on random texts -------------------------------------------

WORDS = ["tea", "cello", "porto", "cat", "rain", "bike", "jazz", "sea", "", "- fact"]


class Texts:
    """Random texts and edits from one seeded generator; new lines are never seen before."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fresh = 0

    def new_line(self) -> str:
        self.fresh += 1
        return f"- line {self.fresh} {self.rng.choice(WORDS)}".strip()

    def base(self, size: int, *, repeats: bool) -> list[str]:
        if repeats:
            return [
                self.rng.choice(WORDS) if self.rng.random() < 0.3 else self.new_line()
                for _ in range(size)
            ]
        return [self.new_line() for _ in range(size)]

    def edit(self, text: list[str], edits: int) -> list[str]:
        out = list(text)
        for _ in range(edits):
            kind = self.rng.choice(("insert", "delete", "replace"))
            if kind == "insert" or not out:
                out.insert(self.rng.randint(0, len(out)), self.new_line())
            elif kind == "delete":
                del out[self.rng.randrange(len(out))]
            else:
                out[self.rng.randrange(len(out))] = self.new_line()
        return out

    def text(self, text: list[str]) -> str:
        if not text:
            return ""
        return "\n".join(text) + ("\n" if self.rng.random() < 0.8 else "")


def test_merging_with_an_unchanged_side_or_the_same_change_gives_that_side() -> None:
    texts = Texts(23)
    for _ in range(ROUNDS):
        base = texts.base(texts.rng.randint(0, 12), repeats=True)
        b = texts.text(base)
        x = texts.text(texts.edit(base, texts.rng.randint(0, 5)))
        assert merge_lines(b, b, x) == LineMerge(x, ())
        assert merge_lines(b, x, b) == LineMerge(x, ())
        assert merge_lines(b, x, x) == LineMerge(x, ())


def test_random_edits_lose_no_added_line_and_merge_the_same_both_ways() -> None:
    texts = Texts(2301)
    conflicts = clean = 0
    for _ in range(ROUNDS):
        base = texts.base(texts.rng.randint(0, 15), repeats=texts.rng.random() < 0.5)
        ours = texts.edit(base, texts.rng.randint(0, 4))
        theirs = texts.edit(base, texts.rng.randint(0, 4))
        b, o, t = texts.text(base), texts.text(ours), texts.text(theirs)
        merged = merge_lines(b, o, t)
        assert merge_lines(b, o, t) == merged  # deterministic
        held = {line.strip() for line in lines(merged)}
        for c in merged.conflicts:
            held.update(line.strip() for line in (*c.ours, *c.theirs))
        added = (set(ours) | set(theirs)) - set(base)
        assert {line.strip() for line in added} <= held, (b, o, t)
        if merged.clean:
            clean += 1
            assert set(lines(merged)) == set(lines(merge_lines(b, t, o))), (b, o, t)
        else:
            conflicts += 1
            assert not merge_lines(b, t, o).clean
    # Both kinds of outcome were exercised.
    assert clean > ROUNDS // 10 and conflicts > ROUNDS // 10


def test_edits_to_separate_regions_merge_cleanly_with_every_change() -> None:
    texts = Texts(230)
    for _ in range(ROUNDS):
        base = texts.base(texts.rng.randint(3, 15), repeats=False)
        # A line neither side touches keeps the two sides' edits apart.
        keep = texts.rng.randint(0, len(base) - 1)
        before = texts.edit(base[:keep], texts.rng.randint(0, 4))
        after = texts.edit(base[keep + 1 :], texts.rng.randint(0, 4))
        first = before + base[keep:]
        second = base[: keep + 1] + after
        ours, theirs = (first, second) if texts.rng.random() < 0.5 else (second, first)
        b, o, t = texts.text(base), "\n".join(ours) + "\n", "\n".join(theirs) + "\n"
        merged = merge_lines(b, o, t)
        assert merged.clean, (b, o, t)
        assert lines(merged) == [*before, base[keep], *after], (b, o, t)
        removed = (set(base) - set(ours)) | (set(base) - set(theirs))
        assert not removed & set(lines(merged))


# --- HISTORY.md: entries ----------------------------------------------------------------------


def entry(stamp: str, text: str, key: str | None = None) -> str:
    return f"[{stamp}] {text}" + (f" <!-- kept:{key} -->" if key else "")


def history(*entries: str, preamble: str = "") -> str:
    return (preamble + "\n\n" if preamble else "") + join_entries(list(entries))


A = entry("2026-11-01 09:00", "Planned the trip.", "s1.0-4")
B = entry("2026-11-02 10:00", "Fixed the bike.", "s2.0-6")
C = entry("2026-11-03 11:00", "Practised cello.", "s3.0-2")
D = entry("2026-11-02 18:00", "Read at night.", "s4.0-2")


def test_histories_merge_as_a_union_in_time_order() -> None:
    base = history(A)
    merged = merge_history(base, history(A, B, C), history(A, D))
    assert merged == history(A, B, D, C)
    assert merge_history(base, history(A, D), history(A, B, C)) == history(A, B, D, C)


def test_an_entry_both_sides_have_is_kept_once() -> None:
    assert merge_history("", history(A, B), history(B, C)) == history(A, B, C)


def test_a_deletion_on_one_side_carries_over() -> None:
    base = history(A, B)
    assert merge_history(base, history(A), history(A, B, C)) == history(A, C)
    assert merge_history(base, history(A, B, C), history(B)) == history(B, C)


def test_a_changed_entry_wins_over_the_unchanged_one_and_ours_over_theirs() -> None:
    retold = entry("2026-11-02 10:00", "Fixed the bike, new chain.", "s2.0-6")
    other = entry("2026-11-02 10:00", "Fixed the bike, new tyre.", "s2.0-6")
    base = history(A, B)
    assert merge_history(base, history(A, B), history(A, retold)) == history(A, retold)
    assert merge_history(base, history(A, retold), history(A, other)) == history(A, retold)
    # Changed on one side, deleted on the other: the change is not lost.
    assert merge_history(base, history(A), history(A, retold)) == history(A, retold)


def test_entries_with_the_same_stamp_keep_their_order_ours_first() -> None:
    one = entry("2026-11-05 12:00", "One.", "s5.0-2")
    two = entry("2026-11-05 12:00", "Two.", "s6.0-2")
    assert merge_history("", history(one), history(two)) == history(one, two)
    assert merge_history("", history(two), history(one)) == history(two, one)


def test_older_entries_without_a_key_merge_on_their_text() -> None:
    old = entry("2026-10-01 08:00", "An entry from before keys.\nIt goes on.")
    merged = merge_history(history(old), history(old, A), history(old, B))
    assert merged == history(old, A, B)


def test_the_preamble_is_ours_unless_only_theirs_changed_it() -> None:
    base = history(A, preamble="# History")
    assert merge_history(
        base, history(A, preamble="# Mine"), history(A, preamble="# Theirs")
    ) == history(A, preamble="# Mine")
    assert merge_history(base, base, history(A, preamble="# Theirs")) == history(
        A, preamble="# Theirs"
    )


def normalised(text: str) -> str:
    """A history (without a preamble) as a merge writes it: each entry once, by stamp."""
    seen: dict[str, HistoryEntry] = {}
    for e in parse_entries(text, Path("HISTORY.md")):
        seen.setdefault(e.key, e)
    return history(*(e.text for e in sorted(seen.values(), key=lambda e: e.stamp)))


class Histories:
    """Random histories from one seeded generator: entries with and without keys, stamps
    that tie, and sides that add, delete, retell and reorder entries."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.made = 0

    def fresh(self) -> str:
        self.made += 1
        stamp = f"2026-11-{self.rng.randint(1, 9):02d} {self.rng.randint(8, 9):02d}:00"
        if self.rng.random() < 0.2:
            return entry(stamp, f"Old entry {self.made}.")
        return entry(stamp, f"Session {self.made}.", f"s{self.made}.0-2")

    def retold(self, text: str) -> str:
        if "<!--" not in text or self.rng.random() < 0.9:
            return text
        self.made += 1
        head, key = text.split(" <!-- ")
        return f"{head} Retold {self.made}. <!-- {key}"

    def edit(self, entries: list[str]) -> list[str]:
        out = [self.retold(e) for e in entries if self.rng.random() < 0.85]
        out += [self.fresh() for _ in range(self.rng.randint(0, 4))]
        self.rng.shuffle(out)  # a hand edit may leave them in any order
        return out


def parsed(text: str) -> dict[str, str]:
    return {e.key: e.text for e in parse_entries(text, Path("HISTORY.md"))}


def test_history_merge_properties_on_random_interleaved_entries() -> None:
    made = Histories(2323)
    for _ in range(ROUNDS):
        base = [made.fresh() for _ in range(made.rng.randint(0, 6))]
        ours, theirs = made.edit(base), made.edit(base)
        b, o, t = history(*base), history(*ours), history(*theirs)
        merged = merge_history(b, o, t)
        assert merge_history(b, o, t) == merged  # deterministic
        result = parse_entries(merged, Path("HISTORY.md"))
        keys = [e.key for e in result]
        assert len(keys) == len(set(keys)), "each entry once"
        assert [e.stamp for e in result] == sorted(e.stamp for e in result)
        was, mine, other = parsed(b), parsed(o), parsed(t)
        # A side's deletion carries over when the other side left the entry as it was.
        gone = {k for k in was if k not in mine and other.get(k) == was[k]}
        gone |= {k for k in was if k not in other and mine.get(k) == was[k]}
        assert set(keys) == (set(mine) | set(other)) - gone
        for e in result:
            changed = [
                s[e.key] for s in (mine, other) if s.get(e.key, was.get(e.key)) != was.get(e.key)
            ]
            assert e.text == (changed[0] if changed else mine.get(e.key, other.get(e.key)))
        assert {e.key for e in parse_entries(merge_history(b, t, o), Path("H"))} == set(keys)
        assert merge_history(b, o, o) == normalised(o)
