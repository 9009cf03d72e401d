"""`make bench`: run every benchmark module in this folder and print its numbers."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
import warnings

import tests.bench


def main(selected: list[str]) -> int:
    # A deadline that cancels litellm mid-request leaves one of its coroutines unawaited;
    # Python's warning about it is noise in a table of numbers.
    warnings.filterwarnings("ignore", category=RuntimeWarning, message="coroutine .*")
    names = sorted(
        m.name for m in pkgutil.iter_modules(tests.bench.__path__) if m.name.startswith("bench_")
    )
    for name in names:
        if selected and not any(s in name for s in selected):
            continue
        print(f"\n== {name} ==", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"tests.bench.{name}").main()
        print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
