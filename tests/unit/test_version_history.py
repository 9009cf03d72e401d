"""Versions at scale: numbers from file names, records read only when asked for, and blame
kept per version in a derived cache that always agrees with a full recompute."""

from __future__ import annotations

import contextlib
import difflib
import json
import random

from memory import MemoryStore
from memory.data.files import atomic_write
from memory.data.store import Version
from memory.data.versions import VersionKind
from memory.recall.provenance import blame

WORDS = [
    "tea",
    "cello",
    "porto",
    "lisbon",
    "cat",
    "dog",
    "rain",
    "bike",
    "jazz",
    "bread",
    "sea",
    "hill",
    "moon",
]


def reference(store: MemoryStore) -> list[tuple[str, int | None]]:
    """Blame as it was first written: every version read and diffed, oldest first."""

    def lines(raw: bytes) -> list[str]:
        return raw.decode("utf-8", errors="replace").splitlines()

    def carry(
        base: list[tuple[str, int | None]], new: list[str], writer: int | None
    ) -> list[tuple[str, int | None]]:
        matcher = difflib.SequenceMatcher(None, [t for t, _ in base], new, autojunk=False)
        out: list[tuple[str, int | None]] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            out.extend(base[i1:i2] if tag == "equal" else [(line, writer) for line in new[j1:j2]])
        return out

    by_number: dict[int, list[tuple[str, int | None]]] = {0: []}
    current: list[tuple[str, int | None]] = []
    for path in sorted(store.versions_dir.glob("*.json")):
        try:
            meta = json.loads(path.read_text())
            number = int(path.stem)
            if not isinstance(meta, dict):
                continue
            text = lines(path.with_suffix(".md").read_bytes())
        except (OSError, ValueError):
            continue
        if VersionKind.of(str(meta.get("kind", meta.get("source", "")))) is VersionKind.NOT_KEPT:
            continue
        restored = meta.get("restored")
        base = by_number.get(restored, current) if isinstance(restored, int) else current
        current = by_number[number] = carry(base, text, number)
    return carry(current, lines(store.read_memory().raw), None)


def blamed(store: MemoryStore) -> list[tuple[str, int | None]]:
    return [(line.text, line.version.number if line.version else None) for line in blame(store)]


def line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(3))


def upset_the_cache(store: MemoryStore, op: str, rng: random.Random) -> None:
    """Damage one cached blame file, or now and then drop them all."""
    if not store.blame_dir.is_dir():
        return
    if op == "damage":
        cached = sorted(store.blame_dir.glob("*.json"))
        if cached:
            rng.choice(cached).write_text(rng.choice(["{", "[]", '{"writers": [1]}']))
    elif rng.random() < 0.3:
        for path in store.blame_dir.iterdir():
            path.unlink()


def test_blame_from_the_cache_agrees_with_a_full_recompute_after_random_operations() -> None:
    store = MemoryStore().ensure()
    rng = random.Random(20)
    for step in range(160):
        numbers = store.version_numbers()
        op = rng.choice(
            ["remember"] * 4
            + ["edit", "hand", "restore", "undo", "discard", "consolidation", "damage", "drop"]
        )
        current = store.read_memory()
        body = current.text.splitlines()
        if op == "remember":
            store.remember(line(rng))
        elif op == "edit" and body:
            body[rng.randrange(len(body))] = "- " + line(rng)
            store.save_edit("\n".join(body) + "\n", current.digest)
        elif op == "hand" and body:  # MEMORY.md changed outside Kept: no version yet
            del body[rng.randrange(len(body))]
            atomic_write(store.memory_path, "\n".join(body) + "\n")
        elif op == "restore" and numbers:
            store.restore(rng.choice(numbers))
        elif op == "undo" and numbers:
            with contextlib.suppress(ValueError):  # changed by hand since: nothing written
                store.undo(numbers[-1])
        elif op == "discard":
            store.discard_edit("- never kept " + line(rng) + "\n")
        elif op == "consolidation":
            with store.lock():
                store.keep_unversioned(store.read_memory(), "2026-12-01T10:00:00+00:00")
                text = current.text + f"- {line(rng)}\n"
                store.write_memory(text)
                store.save_version(
                    text.encode(),
                    VersionKind.CONSOLIDATION,
                    time="2026-12-01T10:00:00+00:00",
                    session=f"20261201-1000{step:02d}-abcdef",
                    model="gpt-4.1-mini",
                )
        elif op in ("damage", "drop"):
            upset_the_cache(store, op, rng)
        assert blamed(store) == reference(store), f"step {step}: {op}"
    assert len(store.version_numbers()) > 80


def test_a_new_version_adds_one_cache_file_and_leaves_the_others_alone() -> None:
    store = MemoryStore().ensure()
    for word in WORDS[:6]:
        store.remember(f"likes {word}")
    blame(store)
    before = {p.name: p.stat().st_mtime_ns for p in store.blame_dir.glob("*.json")}
    assert len(before) == 6
    store.remember("likes the sea")
    atomic_write(store.memory_path, store.read_memory().text + "- by hand\n")
    lines = blame(store)
    after = {p.name: p.stat().st_mtime_ns for p in store.blame_dir.glob("*.json")}
    assert set(after) - set(before) == {"000007.json"}
    assert all(after[name] == mtime for name, mtime in before.items())
    assert lines[-1].text == "- by hand" and lines[-1].version is None
    assert lines[-2].version is not None and lines[-2].version.number == 7


def test_blame_needs_no_older_version_once_cached() -> None:
    """With each version's writers cached, only the newest version's text is read: an
    older text the cache has already taken in is not read again (here it is gone)."""
    store = MemoryStore().ensure()
    for word in WORDS[:5]:
        store.remember(f"likes {word}")
    first = blamed(store)
    for number in (1, 2, 3):
        (store.versions_dir / f"{number:06d}.md").unlink()
    assert blamed(store) == first


def test_a_damaged_record_keeps_its_number() -> None:
    """A version whose record cannot be read is still a version: the next one takes the
    next number instead of writing over its text."""
    store = MemoryStore().ensure()
    store.remember("likes tea")
    store.remember("likes jazz")
    (store.versions_dir / "000002.json").write_text("{ torn")
    store.remember("likes rain")
    assert (store.versions_dir / "000002.md").read_text() == "- likes tea\n- likes jazz\n"
    assert [v.number for v in store.versions()][:2] == [1, 3]
    assert store.latest_version_digest() is not None


def test_previous_version_and_latest_read_only_what_they_need() -> None:
    store = MemoryStore().ensure()
    for word in WORDS[:4]:
        store.remember(f"likes {word}")
    store.discard_edit("- never kept\n")
    # Records older than the ones asked about are never read: here they are torn.
    for number in (1, 2):
        (store.versions_dir / f"{number:06d}.json").write_text("{ torn")
    previous = store.previous_version(5)
    assert isinstance(previous, Version) and previous.number == 4
    latest = store.latest_version()
    assert latest is not None and latest.kind is VersionKind.NOT_KEPT
    assert store.version(2) is None and store.version_numbers() == [1, 2, 3, 4, 5]


def test_a_hand_written_line_is_explained_from_the_newest_record_alone() -> None:
    """Where-from on a line you wrote by hand names the version it came after: the newest
    record, read alone (older records are torn here, as 5,000 unread ones would be)."""
    from app.widgets.where_from import described

    store = MemoryStore().ensure()
    for word in WORDS[:3]:
        store.remember(f"likes {word}")
    store.write_memory(store.read_memory().text + "- a line typed by hand\n")
    for number in (1, 2):
        (store.versions_dir / f"{number:06d}.json").write_text("{ torn")
    line = next(b for b in blame(store) if "typed by hand" in b.text)
    assert line.version is None
    read: list[int] = []
    real = store.book.version

    def version(number: int) -> Version | None:
        read.append(number)
        return real(number)

    store.book.version = version  # type: ignore[method-assign]
    assert "You wrote this line by hand (edited by you) after version 3 (" in described(store, line)
    assert read == [3]
