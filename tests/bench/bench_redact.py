"""Redaction of hostile text beside ordinary prose of the same size, same run: a pattern
that backtracks shows as a hostile row far above its baseline (before the linear rewrite,
10,000 BEGIN PRIVATE KEY lines took 23 s and 200 KB of `eyJ-` 16 s)."""

from __future__ import annotations

import time

from memory.consolidation.redact import redact

PROSE = "Ana met Bo in Lisbon; they talked about tea, trains and the budget for May. "


def hostile() -> dict[str, str]:
    return {
        "BEGIN lines, no END": "-----BEGIN RSA PRIVATE KEY-----\n" * 20_000,
        "eyJ- run": "eyJ-" * 100_000,
        "a.a.a… then a URL": "a." * 50_000 + " https://user:pw@example.com/x",
        "?key= values": "https://example.com/?key=abc123def456ghi789&x=1 " * 4_000,
    }


def timed(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        redact(text)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    print(f"   {'input':24} {'size':>9} {'hostile':>9} {'prose':>9}  ratio")
    for name, text in hostile().items():
        prose = (PROSE * (len(text) // len(PROSE) + 1))[: len(text)]
        slow, base = timed(text), timed(prose)
        print(
            f"   {name:24} {len(text) / 1024:7.0f} KB {slow * 1000:7.1f} ms "
            f"{base * 1000:7.1f} ms  {slow / base if base else 0:5.1f}x"
        )


if __name__ == "__main__":
    main()
