"""Trying a key before it is kept: catalog.probe.try_key takes the catalog, the gateway,
the key and the retry policy (no App), asks the gateway's cheapest model, and keeps
nothing."""

from __future__ import annotations

import pytest

from catalog.gateways import GATEWAYS
from catalog.probe import try_key
from tests.fakes.provider import FakeProvider, http_error, text
from tests.support import FAST_POLICY, fake_catalog


@pytest.mark.asyncio
async def test_a_key_the_gateway_takes_is_tried_with_the_cheapest_model(fake: FakeProvider) -> None:
    catalog = fake_catalog(fake, env={})
    fake.default = text("ok")
    groq = GATEWAYS["groq"]
    assert await try_key(catalog, groq, "gsk-trial-0123456789", FAST_POLICY) == ""
    (request,) = fake.requests
    assert request.gateway == "groq"
    assert "gsk-trial-0123456789" in request.headers["authorization"]
    assert not catalog.keys.known(groq).usable  # tried, not kept


@pytest.mark.asyncio
async def test_a_refused_key_is_one_sentence_with_no_step_in_the_apps_words(
    fake: FakeProvider,
) -> None:
    catalog = fake_catalog(fake, env={})
    fake.default = http_error(401)
    said = await try_key(catalog, GATEWAYS["groq"], "gsk-wrong-0123456789", FAST_POLICY)
    assert said.startswith("Groq did not answer ") and said.endswith(".")
    assert "refused" in said and "/keys" not in said and "\n" not in said
