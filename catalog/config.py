"""The catalog's part of config.toml: gateway URLs, the user's own models, retry policy.

Each table is declared once, as a frozen dataclass whose fields carry their defaults and
bounds (catalog.schema's markers: pydantic is imported only when a table with keys in it is
validated); `problems_of` turns pydantic's errors into Kept's sentences for every table of
every layer. Problems are returned as sentences, never raised: a bad setting is reported
and the built-in default stands in for it, so Kept always starts. The app finds and reads
the file (app.settings); this module only validates tables it is handed.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args, get_type_hints
from urllib.parse import urlparse

from catalog.gateways import GATEWAYS, Protocol
from catalog.models import ModelEntry, short_label
from catalog.sanitize import clean_text
from catalog.schema import STRICT, BeforeValidator, Field, with_config

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

CONFIG_FILE = "config.toml"
DEFAULT_WINDOW = 8192  # tokens, for a user's hosted model whose window config.toml does not give
# A local server's window when neither config.toml nor the server says it: llama-cpp-python's
# default n_ctx, the smallest of the common servers'. A guess too large is worse than one too
# small: the server fails the request only after minutes of writing a reply that cannot fit.
LOCAL_WINDOW = 2048
MIN_WINDOW = 256  # tokens: the smallest context_window taken
MAX_WINDOW = 10_000_000  # tokens: the largest (no model has more; max_tokens follows it)
# Every table is a plain frozen dataclass (code may build one with any figures, as tests
# do) whose fields' Annotated metadata is the schema config.toml is validated against:
# unknown keys are reported, and each field marked strict never coerces ("5" is not 5,
# true is not 1).
T = TypeVar("T")


# --- one formatter for every table's problems -------------------------------------------


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def field_info(schema: type[Any]) -> dict[str, tuple[Any, Field]]:
    """Each field of a table: its type and its schema (description, bounds)."""
    found = {}
    for name, hint in get_type_hints(schema, include_extras=True).items():
        args = get_args(hint) if hasattr(hint, "__metadata__") else (hint,)
        infos = [a for a in args[1:] if isinstance(a, Field)]
        found[name] = (args[0], infos[0] if infos else Field())
    return found


def _what(annotation: Any, info: Field) -> str:
    """What a field takes, in words: its description, else its type and bounds."""
    if info.description:
        return str(info.description)
    low, high = info.ge, info.le
    kinds = [k for k in get_args(annotation) or (annotation,) if k is not type(None)]
    kind = kinds[0] if kinds else None
    if kind is bool:
        return "true or false"
    if isinstance(kind, type) and issubclass(kind, Enum):
        return " or ".join(f'"{member.value}"' for member in kind)
    if kind in (int, float):
        noun = "whole number" if kind is int else "number"
        if low is not None and high is not None:
            return f"a {noun} from {_number(low)} to {_number(high)}"
        return f"a {noun}, at least {_number(low)}" if low is not None else f"a {noun}"
    return "a string"


def problems_of(schema: type[Any], error: ValidationError, head: str) -> list[str]:
    """Kept's sentence for each of pydantic's errors: the file and table in `head`, the key,
    and what the key takes (from the field's bounds or description), never pydantic's
    wording or a traceback."""
    known = field_info(schema)
    sentences = []
    for detail in error.errors():
        key = str(detail["loc"][0]) if detail["loc"] else ""
        shown = clean_text(repr(detail["input"]))
        if key not in known:
            sentences.append(
                f"{head} has an unknown key '{clean_text(key)}'; known keys: {', '.join(known)}."
            )
        elif detail["type"] == "missing":
            sentences.append(f"{head} needs {_what(*known[key])}.")
        else:
            sentences.append(f"{head} {key} must be {_what(*known[key])}, not {shown}.")
    return list(dict.fromkeys(sentences))


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(schema: type[T]) -> TypeAdapter[T]:
    """A table's validator, built on first use: a verb that reads no table pays nothing
    (pydantic itself is imported then)."""
    if schema not in _ADAPTERS:
        from pydantic import TypeAdapter

        _ADAPTERS[schema] = TypeAdapter(schema)
    return _ADAPTERS[schema]


def parse_table(schema: type[T], data: object, head: str) -> tuple[T | None, list[str]]:
    """One table, validated: each bad key is a sentence and its default stands in, so a
    mistake loses nothing else; None when the table itself is unusable."""
    if not isinstance(data, dict):
        return None, [f"{head} must be a table, not {clean_text(repr(data))}."]
    if not data:  # nothing to check: the defaults, without building the validator
        try:
            return schema(), []
        except TypeError:  # a table with required keys: the validator names them
            pass
    from pydantic import ValidationError

    adapter = _adapter(schema)
    try:
        return adapter.validate_python(data), []
    except ValidationError as exc:
        problems = problems_of(schema, exc, head)
        bad = {detail["loc"][0] for detail in exc.errors() if detail["loc"]}
    try:
        return adapter.validate_python({k: v for k, v in data.items() if k not in bad}), problems
    except ValidationError:  # a required key was missing or wrong: no table to give
        return None, problems


# --- the tables ----------------------------------------------------------------------------


@with_config(STRICT)
@dataclass(frozen=True)
class TransportTable:
    """[transport]: how hard to try. catalog.transport.RetryPolicy takes its defaults here."""

    # extra tries of the walk's last model
    retries: Annotated[int, Field(ge=0, le=10, strict=True)] = 3
    # first delay; doubles each retry
    backoff: Annotated[float, Field(ge=0.0, le=60.0, strict=True)] = 1.0
    # the head's one retry while a healthy model follows it
    short_backoff: Annotated[float, Field(ge=0.0, le=60.0, strict=True)] = 0.5
    max_backoff: Annotated[float, Field(ge=0.0, le=600.0, strict=True)] = 30.0
    # a longer Retry-After is cut to this
    retry_after_cap: Annotated[float, Field(ge=0.0, le=600.0, strict=True)] = 30.0
    # one request, stream included
    attempt_deadline: Annotated[float, Field(ge=0.1, le=3600.0, strict=True)] = 60.0
    # the longest silence between stream chunks
    stall_timeout: Annotated[float, Field(ge=0.1, le=3600.0, strict=True)] = 30.0


TRANSPORT_DEFAULTS = TransportTable()


def valid_url(value: object) -> bool:
    """An http(s) URL with a host, no credentials in it, no space or control character."""
    if (
        not isinstance(value, str)
        or clean_text(value) != value
        or any(ch.isspace() for ch in value)
    ):
        return False
    parsed = urlparse(value)
    return parsed.scheme in ("http", "https") and bool(parsed.hostname) and "@" not in parsed.netloc


def _url(value: object) -> str:
    if not valid_url(value):
        raise ValueError("not a URL Kept sends to")
    return str(value).rstrip("/")


@with_config(STRICT)
@dataclass(frozen=True)
class GatewayTable:
    """[gateways.NAME]: where Kept sends that gateway's requests."""

    base_url: Annotated[
        str | None,
        BeforeValidator(_url),
        Field(
            description="an http:// or https:// URL with no credentials, spaces or control "
            "characters in it"
        ),
    ] = None


OPENAI_LIKE = tuple(g.name for g in GATEWAYS.values() if g.protocol is Protocol.OPENAI)
# How a server takes a JSON schema for its reply (see catalog.structured); "off" calls tools.
StructuredOutput = Literal["auto", "json_schema", "json_object", "off"]
STRUCTURED_OUTPUT: tuple[str, ...] = get_args(StructuredOutput)


# Characters that show as nothing, or as a space: in an id they let it pose as another.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def visible(text: str) -> bool:
    """No control, format (zero-width, bidi), private, unassigned or filler character, and
    no space other than a plain one, nor at either end: what it shows is all it holds."""
    return text == text.strip() and not any(
        ch in _FILLERS or (unicodedata.category(ch)[0] in "CZ" and ch != " ") for ch in text
    )


def plain(text: str) -> str:
    """`text` as it reads: without format characters or fillers, spaces collapsed, case
    folded; two labels equal here look alike in a list."""
    kept = "".join(
        ch
        for ch in unicodedata.normalize("NFKC", text)
        if ch not in _FILLERS and unicodedata.category(ch)[0] != "C"
    )
    return " ".join(kept.split()).casefold()


def _id(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or not visible(value):
        raise ValueError("not an id")
    return value


def _openai_like(value: object) -> str:
    if value not in OPENAI_LIKE:
        raise ValueError("not an OpenAI-compatible gateway")
    return str(value)


def _structured(value: object) -> object:
    if value not in STRUCTURED_OUTPUT:
        raise ValueError("not a way to ask for structured output")
    return value


Text = Annotated[str | None, Field(strict=True)]


@with_config(STRICT)
@dataclass(frozen=True)
class ModelTable:
    """One [[models]] entry: a model of the user's on an OpenAI-compatible gateway."""

    id: Annotated[
        str,
        BeforeValidator(_id),
        Field(
            description='an id such as "llama3.2", with no control, invisible or format '
            "characters and no space at either end"
        ),
    ]
    label: Text = None
    api_model: Text = None
    gateway: Annotated[
        str,
        BeforeValidator(_openai_like),
        Field(description=f"an OpenAI-compatible gateway ({', '.join(OPENAI_LIKE)})"),
    ] = "local"
    fallback: Text = None
    # tokens; unset: LOCAL_WINDOW on a keyless gateway, else DEFAULT_WINDOW
    context_window: Annotated[int | None, Field(ge=MIN_WINDOW, le=MAX_WINDOW, strict=True)] = None
    tier: Text = None
    description: Text = None
    # seconds one request may take; replaces every other cap for this model
    deadline: Annotated[float | None, Field(ge=1, le=86_400, strict=True)] = None
    structured_output: Annotated[
        StructuredOutput | None,
        BeforeValidator(_structured),
        Field(description=f"one of {', '.join(STRUCTURED_OUTPUT)}"),
    ] = None


# --- the catalog's tables, together -------------------------------------------------------


@dataclass(frozen=True)
class CatalogConfig:
    gateway_urls: dict[str, str] = field(default_factory=dict)
    user_models: tuple[ModelEntry, ...] = ()
    transport: dict[str, float | int] = field(default_factory=dict)  # RetryPolicy.from_config
    problems: tuple[str, ...] = ()
    # Gateways whose [gateways.X] table is present but wrong: each unusable until fixed,
    # never silently sent to its public endpoint instead of the user's.
    broken_gateways: dict[str, str] = field(default_factory=dict)


def _broken(name: str, where: str) -> str:
    return (
        f"[gateways.{name}] in {where} is not valid, so Kept sends nothing through "
        f"{name} until it is fixed (it never falls back to the default endpoint)."
    )


_GATEWAY_MENTION = re.compile(r"\bgateways\b")


def mentioned_gateways(text: str) -> set[str]:
    """Gateways a file that does not parse seems to configure: those are not used."""
    if not _GATEWAY_MENTION.search(text):
        return set()
    return {name for name in GATEWAYS if re.search(rf"\b{re.escape(name)}\b", text)}


def parse_catalog_config(
    data: dict[str, Any], where: str = CONFIG_FILE, unparsed: str | None = None
) -> CatalogConfig:
    """Validate the [gateways.*], [[models]] and [transport] tables of a parsed config.
    `unparsed` is the text of a file that did not parse: the gateways it names are not used."""
    problems: list[str] = []
    urls: dict[str, str] = {}
    broken = {name: _broken(name, where) for name in sorted(mentioned_gateways(unparsed or ""))}
    gateways = data.get("gateways", {})
    if not isinstance(gateways, dict):
        problems.append(f"{where}: 'gateways' must be a table like [gateways.groq].")
        broken.update((name, _broken(name, where)) for name in GATEWAYS)
        gateways = {}
    for name, raw in gateways.items():
        if name not in GATEWAYS:
            problems.append(
                f"{where}: [gateways.{clean_text(name)}] is not a gateway Kept knows; "
                f"use one of {', '.join(GATEWAYS)}."
            )
            continue
        gateway, wrong = parse_table(GatewayTable, raw, f"{where}: [gateways.{name}]")
        problems += wrong
        if wrong or gateway is None:
            broken[name] = _broken(name, where)
        elif gateway.base_url:
            urls[name] = gateway.base_url

    models: list[ModelEntry] = []
    raw_models = data.get("models", [])
    if not isinstance(raw_models, list):
        problems.append(f"{where}: 'models' must be an array of tables ([[models]]).")
        raw_models = []
    for index, raw in enumerate(raw_models, start=1):
        head = f"{where}: [[models]] #{index}"
        if isinstance(raw, dict) and isinstance(raw.get("id"), str) and visible(raw["id"]):
            head += f" ({raw['id']})"
        entry, wrong = parse_table(ModelTable, raw, head)
        problems += wrong
        if entry is not None and not wrong:  # a wrong entry is left out, not half-used
            models.append(user_model(entry))

    transport, wrong = parse_table(
        TransportTable, data.get("transport", {}), f"{where}: [transport]"
    )
    problems += wrong
    values = asdict(transport or TRANSPORT_DEFAULTS)
    return CatalogConfig(urls, tuple(models), values, tuple(problems), broken)


def user_model(table: ModelTable) -> ModelEntry:
    """The catalog entry for a validated [[models]] table."""
    base = local_model(table.id, table.gateway, table.context_window)
    structured = table.structured_output or base.structured_output or "off"
    return replace(
        base,
        label=_shown(table.label) or base.label,
        tier=clean_text(table.tier or "local"),
        description=clean_text(table.description or base.description),
        fallback=table.fallback,
        api_model=table.api_model,
        structured_output=None if structured == "off" else structured,
        deadline=table.deadline or base.deadline,
    )


def _shown(text: str | None) -> str:
    """A label as it shows: no control, format (zero-width, bidi) or filler characters."""
    text = clean_text(text or "")
    return " ".join(
        "".join(
            ch for ch in text if ch not in _FILLERS and unicodedata.category(ch)[0] != "C"
        ).split()
    )


def remote_host(base_url: str | None) -> str | None:
    """The host of `base_url` when it is not this machine (None: loopback, or no URL):
    what is sent there leaves the machine."""
    host = (urlparse(base_url).hostname or "") if base_url else ""
    if not host or host == "localhost" or host.endswith(".localhost"):
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    return None if address.is_loopback or address.is_unspecified else host


# A model on the user's own machine is free and often runs on a busy CPU (4 tokens/s seen
# under load): the hosted deadlines (30-60 s) would time out every save, every retry.
LOCAL_DEADLINE = 600.0


def local_model(model_id: str, gateway: str = "local", window: int | None = None) -> ModelEntry:
    """A model of the user's on an OpenAI-compatible gateway, with the defaults config.toml
    gives one: free, labelled by its file's name when its id is a path, and on a keyless
    gateway a LOCAL_WINDOW-token window unless known, structured output and a deadline of
    LOCAL_DEADLINE."""
    keyless = not GATEWAYS[gateway].needs_key
    return ModelEntry(
        id=model_id,
        label=short_label(model_id),
        tier="local",
        description=f"Your own model on the {gateway} gateway",
        gateway=gateway,
        context_window=window or (LOCAL_WINDOW if keyless else DEFAULT_WINDOW),
        input_per_mtok=0.0,
        output_per_mtok=0.0,
        structured_output="auto" if keyless else None,
        deadline=LOCAL_DEADLINE if keyless else None,
        user=True,
    )
