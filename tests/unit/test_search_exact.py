"""The scan's quick paths find exactly what reading every line does: each line of a file
taken on its own, a journal's line parsed with json.loads and its message's text matched
with the pattern's regular expression. Hostile journal lines (escapes, whitespace around
the object, extra data, duplicate keys, raw control characters, lone surrogates, bytes
that are not UTF-8) are where a quicker parse could differ; a word that is only a key, a
time or an escape must be found as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import MemoryStore
from memory.recall.pattern import Scope
from memory.recall.scan import _stamp_before, message_stamp, scan
from memory.recall.search import Match, Pattern, searched_files
from tests.factories import PATTERNS, corpus

Q = "quokka"
HOSTILE = [
    '{"role":"user","content":"caf\\u00e9 \\"quoted\\" quokka, line\\nbreak\\\\n","time":"x"}',
    '{"role": "assistant", "content": "spaced quokka é", "time": "2025-05-01T10:00:00"}',
    '  {"role":"user","content":"leading space quokka"}',
    '{"role":"user","content":"trailing space quokka"}  ',
    '{"role":"user","content":"extra data quokka"} {"role":"user"}',
    '{"role":"user","content":"closed twice quokka"}}',
    '{"role":"user","content":"raw\ttab quokka"}',
    '{"role":"user","content":"first quokka","content":"second quokka"}',
    '["role","content","quokka"]',
    '"quokka"',
    '{"role":"user","content":"NaN quokka","n":NaN}',
    '{"role":"user","content":"\\ud800 lone quokka"}',
    '{"role":"user","content":{"text":"quokka in a dict"}}',
    '{"role":"user","content":[{"type":"text","text":"quokka part"},"quokka str",{"t":1}]}',
    '{"role":"user","content":"crlf quokka","time":"2025-05-02T10:00:00+00:00"}\r',
    '{"role":1,"content":"numeric role quokka","time":"not a time"}',
    '{"content":"no role quokka"}',
    '{"role":"user","content":"unterminated quokka',
    '{"role":"user","content":"garbage after quokka"}x',
    '{"role":"user","content":"time key only"," time":"quokka"}',
    '{"role":"user","content":"Z\\u00fcrich, QUOKKA \\u00c9t\\u00e9"}',
    '{"role":"user","content":"Stra\\u00dfe and STRASSE and \\u212aelvin quokka"}',
    "",
    "not json, quokka",
    '{"role":"user","content":"multi\\nline\\nquokka\\nend"}',
    '{"role":"user","content":"\\u2028sep quokka\\u2029"}',
]
EXTRA_PATTERNS = [
    "time",
    "2025-05",
    "user",
    "\\n",
    "\\u00e9",
    "u00e9",
    "é",
    "été",
    "ÉTÉ",
    '"',
    "\\",
    '\\"',
    "{",
    "}",
    ",",
    ":",
    "NaN",
    "\u212a",
    "strasse",
    "line\nbreak",
    "sep",
    "\t",
]


def read_every_line(
    store: MemoryStore, pattern: Pattern, details: bool, private: bool
) -> list[Match]:
    """The scan, as it is meant: every line of every file read on its own, newest first."""
    out: list[Match] = []
    for path in searched_files(store):
        data = path.read_bytes()
        journal = path.suffix == ".jsonl"
        if journal and not private and b'"private":true' in data[: data.find(b"\n")]:
            continue
        found: list[Match] = []
        start = 0
        for number, raw in enumerate(data.split(b"\n"), 1):
            line_start, start = start, start + len(raw) + 1
            text = raw.decode("utf-8", errors="replace").rstrip("\r")
            folded = raw.lower() if pattern.fold else raw
            if journal:
                match = _message_match(path, number, text, folded, pattern, details)
            else:
                assert pattern.literal is not None
                match = None
                if pattern.literal in folded:
                    spans = pattern.spans(text) if details else ()
                    stamp = _stamp_before(data, line_start) if details else None
                    match = Match(path, number, text, spans, stamp)
            if match is not None:
                found.append(match)
        out += reversed(found)
    return out


def _message_match(
    path: Path, number: int, text: str, folded: bytes, pattern: Pattern, details: bool
) -> Match | None:
    """The match a journal line holds: its message's text, read as JSON."""
    compiled = pattern.compiled
    if pattern.json_literal is not None:
        if pattern.json_literal not in folded:
            return None
    elif not compiled.search(text):
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or "role" not in record:
        return None
    content = record.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not compiled.search(content):
        return None
    said = content
    if "\n" in content:
        lines = content.splitlines() or [content]
        said = next((line for line in lines if compiled.search(line)), lines[0])
    spans = pattern.spans(said) if details else ()
    stamp = message_stamp(str(record.get("time")))
    return Match(path, number, said, spans, stamp, str(record.get("role")), path.stem)


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore().ensure()
    corpus(store)
    header = {"kept": "session", "version": 1, "id": "20250501-100000-dddddd", "quokka": 1}
    lines = [json.dumps(header, separators=(",", ":")), *HOSTILE]
    path = store.done_dir / "20250501-100000-dddddd.jsonl"
    path.write_bytes(
        "\n".join(lines).encode("utf-8", errors="surrogatepass")
        + b'\n{"role":"user","content":"bad \xff byte quokka"}\n{"role":"user","content":"last'
        b' line, no newline, quokka"}'
    )
    return store


@pytest.mark.parametrize("ignore_case", [False, True])
def test_the_scan_finds_what_reading_every_line_finds(
    store: MemoryStore, ignore_case: bool
) -> None:
    checked = 0
    for text in [*PATTERNS, *EXTRA_PATTERNS, Q]:
        pattern = Pattern(text, ignore_case=ignore_case)
        if pattern.literal is None or "\n" in text:  # found in the decoded text: unchanged
            continue
        for details in (False, True):
            for private in (False, True):
                expected = read_every_line(store, pattern, details, private)
                found = list(scan(store, pattern, Scope(details=details, private=private)))
                assert found == expected, (text, ignore_case, details, private)
                checked += len(found)
    assert checked > 500


def test_each_hostile_journal_line_is_judged_as_json_loads_judges_it(
    store: MemoryStore,
) -> None:
    said = [m.text for m in scan(store, Pattern(Q), Scope(details=False))]
    assert "spaced quokka é" in said
    assert "second quokka" in said  # the last of two keys, as json.loads keeps it
    assert 'café "quoted" quokka, line' in said
    assert "quokka part" in said  # the first line of a multi-part message that matches
    assert {"leading space quokka", "trailing space quokka"} <= set(said)  # JSON's blanks
    for refused in ("extra data", "closed twice", "raw\ttab", "unterminated", "garbage"):
        assert not any(refused in text for text in said), refused
    # Words only in a key, a header or a time are never hits.
    for word in ("role", "content", "time", "kept", "2025-05"):
        found = scan(store, Pattern(word), Scope(details=False))
        assert all(word in m.text for m in found), word


def test_a_match_made_quickly_is_a_match(tmp_path: Path) -> None:
    from memory.recall.pattern import quick_match

    quick = quick_match(tmp_path, 3, "text", ((0, 1),), "2025-01-01 10:00", "user", "sid")
    plain = Match(tmp_path, 3, "text", ((0, 1),), "2025-01-01 10:00", "user", "sid")
    assert quick == plain and hash(quick) == hash(plain) and repr(quick) == repr(plain)
    with pytest.raises(AttributeError):
        quick.line = 4  # type: ignore[misc]


def test_the_quick_find_finds_what_bytes_find_finds() -> None:
    import random

    from memory.recall.scan import _finder

    rng = random.Random(20)
    alphabet = [b"a", b"b", b" ", b"\n", b"q", b"Z", "é".encode(), b'"']
    for trial in range(400):
        weights = [rng.random() ** 3 for _ in alphabet]  # some bytes rare, some common
        size = rng.choice([50, 3000, 40000])
        haystack = b"".join(rng.choices(alphabet, weights, k=size))
        needle = b"".join(rng.choices(alphabet, k=rng.randint(1, 5)))
        if trial % 3 == 0:  # one that is surely in it
            at = rng.randrange(max(1, size - 5))
            needle = haystack[at : at + rng.randint(1, 5)] or needle
        find = _finder(haystack, needle)
        for start in (0, 1, *rng.sample(range(size), 20)):
            assert find(needle, start) == haystack.find(needle, start), (trial, needle, start)
        hits, at = [], find(needle, 0)
        while at >= 0:
            hits.append(at)
            at = find(needle, at + 1)
        expected, at = [], haystack.find(needle)
        while at >= 0:
            expected.append(at)
            at = haystack.find(needle, at + 1)
        assert hits == expected, (trial, needle)
    # A byte rare at the start and common later: the quick find gives way to the plain one.
    haystack = b"a" * 4000 + b"qx" * 20000 + b"qa" + b"qx" * 100 + b"qa"
    find = _finder(haystack, b"qa")
    assert find(b"qa", 0) == haystack.find(b"qa") and find(b"qa", 44002) == 44202


def test_the_quick_find_looks_for_the_rarest_byte_of_the_word() -> None:
    from memory.recall.scan import _rarest

    # "h" is rarer in prose than "t" or "e"; a byte the table does not list (a capital, an
    # accent) rarer than any it does.
    assert b"the"[_rarest(b"the")] == ord("h")
    assert b"print"[_rarest(b"print")] == ord("p")
    assert b"Quokka"[_rarest(b"Quokka")] == ord("Q")
