"""Is a local server there, which models does it have, what window does each run with,
and does one answer? Does a gateway answer with a key (`try_key`)?

The probe is plain urllib on purpose (OpenAI's GET /v1/models, Ollama's GET /api/tags): it
must be quick and must not import litellm. Only the test message goes through litellm.
A window is read where the server says it: llama.cpp's llama-server in GET /props, Ollama
in POST /api/show. llama-cpp-python and LM Studio's OpenAI API do not say it: the caller
asks the user, offering `ServerProbe.default_window`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from catalog.config import LOCAL_WINDOW

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.gateways import Gateway
    from catalog.models import ModelEntry
    from catalog.transport import RetryPolicy


# Ollama's context window for a model whose parameters set no num_ctx (2,048 before 0.6.7;
# since 0.15.5 larger with enough VRAM, never smaller).
OLLAMA_WINDOW = 4096


@dataclass(frozen=True)
class ServerModel:
    id: str
    context_window: int | None = None  # when the server says


@dataclass(frozen=True)
class ServerProbe:
    """What answered at an address: the OpenAI base URL to use and its models, or why not."""

    url: str
    base_url: str | None = None  # ends in /v1: what litellm's openai/ prefix needs
    kind: str = ""  # "openai" or "ollama"
    models: tuple[ServerModel, ...] = ()
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.base_url is not None

    @property
    def default_window(self) -> int:
        """The window to offer for a model whose window the server does not say: the
        server's own default where Kept knows it, else the conservative LOCAL_WINDOW."""
        return OLLAMA_WINDOW if self.kind == "ollama" else LOCAL_WINDOW

    def window(self, model_id: str) -> int | None:
        """The context window the server says `model_id` runs with, if it says."""
        return next((m.context_window for m in self.models if m.id == model_id), None)


def _get(url: str, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON at `url`: GET, or POST when there is a `body`."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data, headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read(4_000_000) or b"null")


def _why(url: str, exc: BaseException) -> str:
    reason = getattr(exc, "reason", exc)
    if isinstance(exc, urllib.error.HTTPError):
        return f"{url} answered HTTP {exc.code}"
    if isinstance(reason, ConnectionRefusedError):
        return f"nothing is listening at {url} (connection refused)"
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return f"no answer from {url} in time"
    return f"{url} could not be reached ({reason})"


def _openai_models(payload: Any) -> tuple[ServerModel, ...] | None:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return tuple(
        ServerModel(item["id"])
        for item in data
        if isinstance(item, dict) and isinstance(item.get("id"), str)
    )


def _llama_server_window(root: str, timeout: float) -> int | None:
    """The context llama.cpp's llama-server was started with (its GET /props), if it is one:
    what a request must fit, which the model's training context may exceed."""
    try:
        props = _get(f"{root}/props", timeout)
    except (OSError, ValueError):
        return None
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    window = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _plausible(window)


def _plausible(window: object) -> int | None:
    """A window a server said, if it is one a model can have (a hostile or broken server
    must not size requests to 2**63 tokens)."""
    from catalog.config import MAX_WINDOW, MIN_WINDOW

    if isinstance(window, int) and not isinstance(window, bool):
        return window if MIN_WINDOW <= window <= MAX_WINDOW else None
    return None


def _is_ollama(root: str, timeout: float) -> bool:
    """Whether Ollama answers at `root` (its GET /api/version): its OpenAI API lists the
    models, but only its own API says their windows."""
    try:
        version = _get(f"{root}/api/version", timeout)
    except (OSError, ValueError):
        return False
    return isinstance(version, dict) and "version" in version


def _ollama_window(root: str, model: str, timeout: float) -> int | None:
    """The window Ollama runs `model` with: the num_ctx of its parameters, else Ollama's
    default, never more than the context the model was trained for (POST /api/show)."""
    try:
        # "model" since Ollama 0.5, "name" before it.
        shown = _get(f"{root}/api/show", timeout, {"model": model, "name": model})
    except (OSError, ValueError):
        return None
    if not isinstance(shown, dict):
        return None
    info = shown.get("model_info")
    trained = [
        v
        for k, v in (info.items() if isinstance(info, dict) else ())
        if k.endswith(".context_length") and isinstance(v, int) and v > 0
    ]
    parameters = shown.get("parameters")
    asked = [
        int(words[1])
        for line in (parameters.splitlines() if isinstance(parameters, str) else ())
        if len(words := line.split()) == 2 and words[0] == "num_ctx" and words[1].isdigit()
    ]
    window = asked[-1] if asked and asked[-1] > 0 else OLLAMA_WINDOW
    return _plausible(min(window, trained[0]) if trained else window)


def _said(
    root: str, models: tuple[ServerModel, ...], timeout: float
) -> tuple[tuple[ServerModel, ...], bool]:
    """The models with the windows the server says they run with (llama-server's /props,
    else Ollama's /api/show), and whether the server is Ollama."""
    window = _llama_server_window(root, timeout)
    if window:
        return tuple(ServerModel(m.id, window) for m in models), False
    if _is_ollama(root, timeout):
        return tuple(ServerModel(m.id, _ollama_window(root, m.id, timeout)) for m in models), True
    return models, False


def _ollama_models(payload: Any) -> tuple[ServerModel, ...] | None:
    data = payload.get("models") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return tuple(
        ServerModel(item["name"])
        for item in data
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    )


def probe_server(url: str, timeout: float = 5.0, *, windows: bool = True) -> ServerProbe:
    """Ask `url` for its models (OpenAI's GET /v1/models, then Ollama's GET /api/tags) and,
    with `windows`, the context window of each where the server says it.

    Accepts the address with or without /v1; never raises for network trouble."""
    url = url.strip().rstrip("/")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return ServerProbe(url, problem="the address must start with http:// or https://")
    root = url[:-3] if url.endswith("/v1") else url
    problems: list[str] = []
    try:
        models = _openai_models(_get(f"{root}/v1/models", timeout))
        if models is not None:
            models, ollama = _said(root, models, timeout) if windows else (models, False)
            return ServerProbe(url, f"{root}/v1", "ollama" if ollama else "openai", models)
    except (OSError, ValueError) as exc:
        problems.append(_why(f"{root}/v1/models", exc))
        if "connection refused" in problems[-1] or "in time" in problems[-1]:
            return ServerProbe(url, problem=problems[-1])
    try:
        models = _ollama_models(_get(f"{root}/api/tags", timeout))
        if models is not None:
            if windows:
                models, _ = _said(root, models, timeout)
            return ServerProbe(url, f"{root}/v1", "ollama", models)
    except (OSError, ValueError) as exc:
        problems.append(_why(f"{root}/api/tags", exc))
    return ServerProbe(
        url,
        problem=problems[0]
        if problems
        else f"{url} answered, but not as an OpenAI-compatible or Ollama server",
    )


def reachable(base_url: str, timeout: float = 2.0) -> str:
    """ "" when a server answers at `base_url`, else the sentence that says why not."""
    probe = probe_server(base_url, timeout, windows=False)
    return "" if probe.ok else probe.problem


async def try_local_model(
    catalog: Catalog,
    base_url: str,
    model_id: str,
    window: int | None = None,
    policy: RetryPolicy | None = None,
) -> str:
    """Send one short message to `model_id` at `base_url`: "" when it answered, else the
    sentence that says why not. Nothing is saved either way."""
    import asyncio

    from catalog.catalog import Catalog
    from catalog.config import CatalogConfig, local_model
    from catalog.llm import litellm
    from catalog.transport import complete

    await asyncio.to_thread(litellm)  # the import takes seconds: not on the caller's loop
    entry = local_model(model_id, "local", window)
    trial = Catalog((entry,), CatalogConfig(gateway_urls={"local": base_url}), catalog.keys)
    result = await complete(
        trial,
        model_id,
        [{"role": "user", "content": "Reply with: ok"}],
        walk_chain=False,
        max_tokens=8,
        policy=policy,
    )
    if result.ok:
        return ""
    reason = result.attempts[-1].reason if result.attempts else result.reason
    return f"{model_id} did not answer a test message ({reason}); nothing was saved."


async def try_key(
    catalog: Catalog, gateway: Gateway, value: str | None = None, policy: RetryPolicy | None = None
) -> str:
    """ "" when the gateway answers with `value` (or its current key), else a sentence
    saying why not. The cheapest model is asked, for five tokens: a test costs nothing.
    Nothing is saved either way."""
    import asyncio
    import copy

    from catalog.keys import TrialKeys
    from catalog.llm import litellm
    from catalog.transport import complete

    await asyncio.to_thread(litellm)  # the import takes seconds: not on the caller's loop
    if value is not None:
        catalog = copy.copy(catalog)
        catalog.keys = TrialKeys(catalog.keys, gateway.name, value)
    models = [e for e in catalog.entries if e.gateway == gateway.name]
    if not models:
        return f"No model uses the {gateway.label} gateway."

    def price(entry: ModelEntry) -> float:
        pricing = catalog.pricing(entry)
        return pricing.input_per_token + pricing.output_per_token if pricing else float("inf")

    cheapest = min(models, key=price)
    result = await complete(
        catalog,
        cheapest.id,
        [{"role": "user", "content": "Reply: ok"}],
        walk_chain=False,
        max_tokens=5,
        policy=policy,
    )
    if result.ok:
        return ""
    reason = result.attempts[-1].reason if result.attempts else "no answer"
    return f"{gateway.label} did not answer {cheapest.label}: {reason}."
