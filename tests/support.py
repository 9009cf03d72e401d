"""Helpers shared by tests and benchmarks: a catalog wired to the fake provider."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog import MODEL_CATALOG, Catalog, KeyStore, ModelEntry, RetryPolicy
from catalog.config import CatalogConfig
from catalog.gateways import GATEWAYS
from memory.message import Message
from tests.fakes.provider import FakeProvider

if TYPE_CHECKING:
    import pytest
    from textual.pilot import Pilot

    from app.main import KeptApp
    from memory import MemorySettings, MemoryStore
    from memory.sessions.journal import Journal

PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GROQ_API_KEY",
    "GEMINI_API_KEY",
    "DEEPSEEK_API_KEY",
)


FAKE_GATEWAYS = ("openai", "groq", "anthropic", "deepseek", "local")

# Tiny delays so tests exercise the whole policy in milliseconds, and deadlines far above
# the work: on a busy machine an app drawing a reply has held its event loop for over 2 s
# between two chunks of a healthy stream. A test of a hang or a stall sets its own.
FAST_POLICY = RetryPolicy(
    retries=3,
    backoff=0.001,
    max_backoff=0.01,
    retry_after_cap=0.05,
    attempt_deadline=30.0,
    stall_timeout=15.0,
)


def fake_keys(*, without: tuple[str, ...] = ()) -> dict[str, str]:
    """Environment variables holding a fake key for every gateway the fake speaks."""
    return {
        gw.env_var: f"sk-test-{gw.name}-0123456789"
        for gw in GATEWAYS.values()
        if gw.env_var and gw.name in FAKE_GATEWAYS and gw.name not in without
    }


def fake_catalog(
    fake: FakeProvider,
    *,
    entries: tuple[ModelEntry, ...] = MODEL_CATALOG,
    env: dict[str, str] | None = None,
) -> Catalog:
    """The real catalog, every fake-able gateway pointed at the fake provider."""
    urls = {name: fake.base_url(name) for name in FAKE_GATEWAYS}
    return Catalog(
        entries,
        CatalogConfig(gateway_urls=urls),
        KeyStore(environ=fake_keys() if env is None else env),
    )


def local_catalog(fake: FakeProvider, extra: str = "", **env: str) -> Catalog:
    """A catalog whose only model is SmolLM2 on a local server (the fake), as config.toml
    declares one; `extra` lines join its [[models]] table."""
    import tomllib

    from catalog.config import parse_catalog_config

    config = tomllib.loads(f"""
[gateways.local]
base_url = "{fake.base_url("local")}"

[[models]]
id = "smollm2"
context_window = 4096
{extra}
""")
    parsed = parse_catalog_config(config)
    assert parsed.problems == ()
    return Catalog(config=parsed, keys=KeyStore(environ=env))


def save_args(
    entry: str = "The user introduced themselves.",
    memory: str = "# About the user\n- Name: Ana\n",
    *,
    quote: str = "Ana",
    base: str = "",
) -> dict[str, Any]:
    """save_memory's arguments that take MEMORY.md from `base` to `memory`: the edits that
    rewrite implies, each quoting `quote`, which the test's user typed."""
    from memory.consolidation.edits import edits_from_rewrite

    edits = []
    for edit in edits_from_rewrite(base, memory):
        item: dict[str, Any] = {"op": str(edit.op), "reason": "said"}
        item.update({k: v for k in ("line", "old", "section") if (v := getattr(edit, k))})
        item["evidence"] = [{"message": 1, "quote": quote}]
        edits.append(item)
    return {"history_entry": entry, "edits": edits}


def rewrite_args(
    entry: str = "The user introduced themselves.", memory: str = "# About the user\n- Name: Ana\n"
) -> dict[str, str]:
    """save_memory's arguments as a model that rewrites MEMORY.md whole sends them."""
    return {"history_entry": entry, "memory_update": memory}


def nothing_new(entry: str = "A short conversation.") -> dict[str, object]:
    """save_memory's arguments for a session that taught nothing about the user."""
    return {"history_entry": entry, "edits": []}


SAMPLE_MESSAGES: list[Message] = [
    {
        "role": "user",
        "content": "Hi! Je m'appelle Ana et j'habite à Zürich.",
        "time": "2026-11-20T09:15:00+00:00",
    },
    {
        "role": "assistant",
        "content": None,
        "model": "gpt-4.1-mini",
        "time": "2026-11-20T09:15:02+00:00",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "search_history", "arguments": '{"pattern": "Zürich"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "search_history",
        "content": "no match",
        "time": "2026-11-20T09:15:03+00:00",
    },
    {
        "role": "assistant",
        "content": "Enchantée, Ana! 日本語も話せますか?",
        "model": "gpt-4.1-mini",
        "time": "2026-11-20T09:15:05+00:00",
    },
    {
        "role": "user",
        "content": "少しだけ。I prefer short answers.",
        "time": "2026-11-20T09:16:00+00:00",
    },
]


def pending_session(
    store: MemoryStore, messages: Sequence[Mapping[str, Any]] | None = None
) -> Journal:
    """A closed session holding `messages`, queued for consolidation; returns the journal."""
    journal = store.new_session("gpt-4.1-mini")
    for message in messages if messages is not None else SAMPLE_MESSAGES:
        journal.append(dict(message))
    journal.mark_pending(close=True)
    return journal


def make_app(
    fake: FakeProvider | None = None,
    *,
    env: dict[str, str] | None = None,
    theme: str = "kept-dark",
    model: str = "gpt-4.1-mini",
    memory_settings: MemorySettings | None = None,
    entries: tuple[ModelEntry, ...] = MODEL_CATALOG,
    **kwargs: Any,
) -> KeptApp:
    """A KeptApp on the temporary data dir, every gateway pointed at the fake provider;
    `entries` is the catalog it knows (the built-in one unless a test fixes its own)."""
    from app.main import KeptApp
    from app.settings import AppSettings, Settings, config_path
    from memory import MemorySettings, MemoryStore

    settings = Settings(
        AppSettings(model=model, theme=theme),
        memory_settings or MemorySettings(attempt_deadline=5.0),
        (),
    )
    catalog = (
        fake_catalog(fake, entries=entries, env=env)
        if fake is not None
        else Catalog(entries, config=CatalogConfig(), keys=KeyStore(environ=env or {}))
    )
    return KeptApp(
        store=MemoryStore(settings=settings.memory),
        catalog=catalog,
        settings=settings,
        policy=FAST_POLICY,
        config_path=config_path(),
        **kwargs,
    )


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type a prompt once the composer has focus (keys pressed before it are lost), press
    Enter, and wait until the reply has been drawn."""
    from app.screens.chat import ChatScreen
    from app.widgets.composer import Composer

    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    await pilot.press(*text)
    await pilot.press("enter")
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    await screen.reply_finished()
    await pilot.pause()


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for every worker the app started (consolidations included) to finish."""
    # start-up jobs begin after frame one
    await until(lambda: getattr(pilot.app, "ready_at", 0) is not None, message="the first frame")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def configure_fake(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, extra: str = ""
) -> FakeProvider:
    """config.toml pointing every gateway at the fake, fast retries, `extra` tables, and a
    key for every gateway in the environment: what a CLI test's `kept` reads."""
    from app.settings import config_path

    lines = [f'[gateways.{g}]\nbase_url = "{fake.base_url(g)}"\n' for g in FAKE_GATEWAYS]
    lines.append("[transport]\nbackoff = 0.001\nmax_backoff = 0.01\nattempt_deadline = 5.0\n")
    if extra:
        lines.append(extra)
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    for name, value in fake_keys().items():
        monkeypatch.setenv(name, value)
    return fake


DEADLINE = 60.0  # far above any wait's work on a busy 2-core machine


async def until(
    condition: Callable[[], object],
    *legacy: Any,
    deadline: float = DEADLINE,
    message: str = "the condition",
) -> None:
    """Let the event loop run until `condition()` holds (a file event, a worker or another
    process takes its own time); fail with `message` once `deadline` seconds have passed.
    The old form `until(pilot, condition, what[, timeout])` still works while tests/tui
    moves to this one."""
    if legacy:
        condition, what, *timeout = legacy
        await until(condition, deadline=timeout[0] if timeout else deadline, message=what)
        return
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline:g} s waiting for {message}")
        await asyncio.sleep(0.05)


def until_blocking(
    condition: Callable[[], object], *, deadline: float = DEADLINE, message: str = "the condition"
) -> None:
    """`until` for a test with no event loop (a child process, a terminal, a thread)."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline:g} s waiting for {message}")
        time.sleep(0.05)


SMALL = "tiny-window"  # a model whose 2,000-token window a long session overflows


def small_window_entries() -> tuple[ModelEntry, ...]:
    """The built-in catalog plus SMALL, on the fake's OpenAI gateway."""
    tiny = ModelEntry(
        SMALL,
        "Tiny",
        "local",
        "a small window",
        "openai",
        context_window=2000,
        input_per_mtok=1.0,
        output_per_mtok=2.0,
    )
    return (*MODEL_CATALOG, tiny)


def gateways_toml(fake: FakeProvider) -> str:
    """config.toml's [gateways] tables, every gateway pointed at the fake provider."""
    return "".join(f'[gateways.{g}]\nbase_url = "{fake.base_url(g)}"\n\n' for g in FAKE_GATEWAYS)


def terminal_env(home: Path, *, keys: bool = True) -> dict[str, str]:
    """What Kept is started with in a real terminal (tmux): this test's folders, no
    keyring, and (unless not `keys`) the fake provider's keys."""
    return {
        "KEPT_DATA_DIR": os.environ["KEPT_DATA_DIR"],
        "KEPT_CONFIG_DIR": os.environ["KEPT_CONFIG_DIR"],
        "KEPT_DEVICE": os.environ["KEPT_DEVICE"],
        "HOME": str(home),
        "TERM": "xterm-256color",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        **(fake_keys() if keys else {}),
    }


def search_children(pid: int | None = None) -> list[int]:
    """The regex-search child processes of this process (or of `pid`), from /proc."""
    found = []
    for tasks in Path(f"/proc/{pid or os.getpid()}/task").glob("*/children"):
        for child in tasks.read_text().split():
            with contextlib.suppress(OSError):
                if b"_child_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
    return found


def listening(port: int) -> bool:
    """Whether a server on this machine accepts connections on `port` yet."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a child `kept` process: this test's folders, nothing else."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    env.update(extra)
    return env
