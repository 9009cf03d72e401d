"""End to end, local-first: a new user with no cloud key, a local server, and no network.

The real `kept` in a real terminal (tmux), recorded by strace: onboarding finds the local
server, chat works, `/new` saves memory, and no connection goes anywhere but loopback.
Once against the loopback fake provider, once against a real model (SmolLM2 on llama.cpp).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from memory import MemoryStore
from tests.fakes.provider import FakeProvider, text
from tests.llama_server import LlamaServer, why_unavailable
from tests.support import save_args, terminal_env
from tests.terminal import KEPT, Terminal, require

require("tmux", "strace")

_CONNECT = re.compile(r"connect\(\d+, \{sa_family=(AF_\w+)(.*?)\}")
_ADDRESS = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')


def outgoing(trace: Path) -> list[str]:
    """Every address the process tree tried to connect to, as strace recorded it."""
    found = []
    for line in trace.read_text(errors="replace").splitlines():
        match = _CONNECT.search(line)
        if match is None or match.group(1) in ("AF_UNIX", "AF_NETLINK"):
            continue
        address = _ADDRESS.search(match.group(2))
        found.append(next(filter(None, address.groups())) if address else match.group(0))
    return found


def walk(terminal: Terminal, url: str, expect_reply: str | None, patience: float) -> None:
    """Onboarding → local server → pick the model → chat → /new → the local model's change
    reviewed and accepted (review = "auto"), or, from a real small model, whatever Kept
    made of it: held for review, or pending with its reason."""
    terminal.wait_until(lambda s: "Or a local server" in s, "the welcome screen")
    terminal.fill(url)
    terminal.keys("Enter")
    terminal.wait_until(lambda s: "pick one with the arrows" in s, "the server's models")
    terminal.keys("Enter")
    terminal.wait_until(
        lambda s: "Message Kept" in s and "Welcome to Kept" not in s,
        "the chat screen",
        timeout=patience,
    )
    terminal.type("Hello, I'm Ana from Zurich.")
    terminal.keys("Enter")
    if expect_reply:
        terminal.wait_until(lambda s: expect_reply in s, "the reply", timeout=patience)
    else:  # a real model: its reply is whatever it is; the status bar counts its tokens
        terminal.wait_until(
            lambda s: "· 0 tokens" not in s and "tokens" in s, "the reply", timeout=patience
        )
    terminal.type("/new")
    terminal.keys("Enter")
    if expect_reply:
        terminal.wait_until(
            lambda s: "memory change to review" in s, "the change to review", timeout=patience
        )
        terminal.keys("C-r")
        terminal.wait_until(lambda s: "Proposed memory change" in s, "the proposed change")
        terminal.keys("a")
        terminal.wait_until(lambda s: "Memory change accepted and saved." in s, "the save")
    else:
        terminal.wait_until(
            lambda s: "memory change to review" in s or "Memory not saved" in s,
            "the save's outcome",
            timeout=patience,
        )
    terminal.keys("C-q")
    terminal.wait_until(lambda s: terminal.exited(), "kept to quit", timeout=60)


def run_kept(
    terminal: Terminal, tmp_path: Path, url: str, reply: str | None, patience: float
) -> list[str]:
    trace = tmp_path / "connections.strace"
    env = terminal_env(tmp_path, keys=False)
    terminal.start(
        [
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=connect",
            "-e",
            "signal=none",
            "-o",
            str(trace),
            str(KEPT),
        ],
        env,
    )
    walk(terminal, url, reply, patience)
    terminal.kill()  # strace writes its last lines as the process tree ends
    return outgoing(trace)


def test_a_local_only_user_gets_memory_saved_and_nothing_leaves_the_machine(
    fake: FakeProvider, tmp_path: Path, terminal: Terminal
) -> None:
    fake.served = ["llama3.2"]
    fake.script(
        "llama3.2",
        text("ok"),
        text("Hello Ana, from your local model."),
        text(json.dumps(save_args(entry="Ana from Zurich said hello locally."))),
    )
    connections = run_kept(
        terminal,
        tmp_path,
        fake.base_url("local").removesuffix("/v1"),
        "Hello Ana, from your local model.",
        120,
    )
    store = MemoryStore()
    assert store.memory_path.read_text() == "# About the user\n- Name: Ana\n"  # save_args()'s
    (entry,) = store.history_entries()
    assert entry.body.endswith("Ana from Zurich said hello locally.")
    assert connections and set(connections) == {"127.0.0.1"}, connections
    consolidation = fake.requests[-1].body
    assert consolidation["response_format"]["type"] == "json_schema"


@pytest.mark.skipif(bool(why_unavailable()), reason=why_unavailable() or "available")
# A small model on two busy cores: 499 s measured; each of the walk's waits allows 900 s.
@pytest.mark.timeout(3600)
def test_a_real_local_model_never_writes_memory_unasked_and_nothing_leaves(
    tmp_path: Path, terminal: Terminal
) -> None:
    """SmolLM2 writes valid, mostly invented memory: Kept holds what passes its checks for
    the user's review and keeps the rest pending with the reason; MEMORY.md is untouched."""
    from memory.consolidation.grounding import grounded
    from memory.consolidation.review import proposals

    with LlamaServer(n_ctx=2048, log=tmp_path / "server.log") as server:
        connections = run_kept(terminal, tmp_path, server.base_url, None, 900)
    store = MemoryStore()
    assert not store.memory_path.exists() and store.history_entries() == []
    waiting, pending = proposals(store), store.pending_sessions()
    assert waiting or pending
    for proposal in waiting:
        said = store.find_session(proposal.session).messages
        for line in proposal.memory_update.splitlines():
            assert not line.startswith("- ") or grounded(line, said), line
    for journal in pending:
        assert all(journal.failures.get(s) for s in journal.pending)
    assert set(connections) == {"127.0.0.1"}, connections


def test_strace_output_is_read_as_addresses(tmp_path: Path) -> None:
    trace = tmp_path / "t.strace"
    trace.write_text(
        "12 connect(3, {sa_family=AF_INET, sin_port=htons(443), "
        'sin_addr=inet_addr("104.18.1.1")}, 16) = -1 EINPROGRESS\n'
        '12 connect(4, {sa_family=AF_UNIX, sun_path="/run/dbus"}, 110) = 0\n'
        "13 connect(5, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), "
        'inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0\n'
    )
    assert outgoing(trace) == ["104.18.1.1", "::1"]
    assert subprocess.run(["strace", "-V"], capture_output=True, check=False).returncode == 0
