"""`kept ask` from a fresh process: the time to the first token on stdout, beside the same
streamed request made with litellm alone from a fresh process, against the fake provider
(which answers at once: what is measured is Kept's own cost over the provider's latency)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import FAKE_GATEWAYS, fake_keys, nothing_new

RUNS = 5
BARE = """
import os, sys, time
started = time.perf_counter()
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
import litellm
litellm.suppress_debug_info = True
for chunk in litellm.completion(model="openai/gpt-4.1-mini", api_base=sys.argv[1],
                                api_key="sk-test", stream=True, max_retries=0,
                                messages=[{"role": "user", "content": "hi"}]):
    if chunk.choices[0].delta.content:
        print(time.perf_counter() - started)
        break
"""


def first_byte(command: list[str], env: dict[str, str]) -> float:
    """Seconds from starting `command` to the first byte it writes on stdout."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    process.stdout.read(1)
    elapsed = time.perf_counter() - started
    process.stdout.read()
    process.wait(timeout=120)
    return elapsed


def main() -> None:
    kept = str(Path(sys.executable).with_name("kept"))
    with FakeProvider() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.set_default("gpt-4.1-mini", text("Green tea.", chunks=4))
        fake.default = tool_call("save_memory", nothing_new())
        config = Path(tmp) / "config"
        config.mkdir()
        (config / "config.toml").write_text(
            "".join(f'[gateways.{g}]\nbase_url = "{fake.base_url(g)}"\n\n' for g in FAKE_GATEWAYS)
            + '[app]\nmodel = "gpt-4.1-mini"\n'
        )
        env = {
            **os.environ,
            **fake_keys(),
            "KEPT_DATA_DIR": str(Path(tmp) / "data"),
            "KEPT_CONFIG_DIR": str(config),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
        ours, bare = [], []
        for _ in range(RUNS):  # interleaved, so both see the same machine
            bare.append(first_byte([sys.executable, "-c", BARE, fake.base_url("openai")], env))
            ours.append(first_byte([kept, "ask", "--no-save", "What do I drink?"], env))
        b, k = statistics.median(bare), statistics.median(ours)
        print(
            f"time to first token from a fresh process (median of {RUNS}; the fake answers "
            f"at once): litellm alone {b * 1000:.0f} ms, kept ask {k * 1000:.0f} ms, "
            f"Kept's own cost {(k - b) * 1000:+.0f} ms"
        )


if __name__ == "__main__":
    main()
