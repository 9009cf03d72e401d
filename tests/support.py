"""Helpers shared by tests and benchmarks: a catalog wired to the fake provider."""

from __future__ import annotations

from catalog import MODEL_CATALOG, Catalog, KeyStore, ModelEntry, RetryPolicy
from catalog.config import CatalogConfig
from catalog.gateways import GATEWAYS
from tests.fakes.provider import FakeProvider

FAKE_GATEWAYS = ("openai", "groq", "anthropic", "deepseek", "local")

# Tiny delays so tests exercise the whole policy in milliseconds.
FAST_POLICY = RetryPolicy(retries=3, backoff=0.001, max_backoff=0.01, retry_after_cap=0.05,
                          attempt_deadline=10.0, stall_timeout=2.0)


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
    return Catalog(entries, CatalogConfig(gateway_urls=urls),
                   KeyStore(environ=fake_keys() if env is None else env))
