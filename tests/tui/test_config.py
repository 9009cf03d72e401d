"""config.toml: each table's schema, the one formatter of its mistakes, one read per start."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import pytest

from app.settings import AppSettings, config_path, load_settings
from catalog import RetryPolicy
from catalog.config import GatewayTable, ModelTable, TransportTable, field_info, parse_table
from memory.settings import MemorySettings

WHERE = "c.toml"


def _write(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _problems(text: str) -> tuple[str, ...]:
    _write(text)
    return load_settings().problems


def _bounds(schema: type) -> list[tuple[str, type, float, float]]:
    """Every numeric field of a table that has both bounds, read from its schema."""
    found = []
    for name, (kind, info) in field_info(schema).items():
        low = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
        high = next((m.le for m in info.metadata if hasattr(m, "le")), None)
        if low is not None and high is not None:
            found.append((name, kind, low, high))
    return found


NUMERIC = [
    ("transport", name, kind, low, high) for name, kind, low, high in _bounds(TransportTable)
] + [("memory", name, kind, low, high) for name, kind, low, high in _bounds(MemorySettings)]


def test_every_table_with_bounds_is_covered() -> None:
    assert {table for table, *_ in NUMERIC} == {"transport", "memory"}
    assert len(NUMERIC) == len(fields(TransportTable)) + 8


@pytest.mark.parametrize(("table", "key", "kind", "low", "high"), NUMERIC)
def test_a_number_at_its_bounds_is_taken_and_past_them_is_one_sentence(
    table: str, key: str, kind: type, low: float, high: float
) -> None:
    path = config_path()
    noun = "whole number" if kind is int else "number"
    for value in (low, high):
        _write(f"[{table}]\n{key} = {value!r}\n")
        assert load_settings().problems == (), value
    shown: Callable[[float], str] = str if kind is int else (lambda v: f"{v:g}")
    for value in (low - 1, high + 1):
        _write(f"[{table}]\n{key} = {value!r}\n")
        assert load_settings().problems == (
            f"{path}: [{table}] {key} must be a {noun} from {shown(low)} to {shown(high)}, "
            f"not {value!r}.",
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a wrong type: never coerced
        (
            '[transport]\nretries = "3"\n',
            "[transport] retries must be a whole number from 0 to 10, not '3'.",
        ),
        (
            "[transport]\nretries = 2.0\n",
            "[transport] retries must be a whole number from 0 to 10, not 2.0.",
        ),
        ("[memory]\nhedge = 1\n", "[memory] hedge must be true or false, not 1."),
        (
            "[memory]\nattempt_deadline = true\n",
            "[memory] attempt_deadline must be a number from 1 to 600, not True.",
        ),
        ("[app]\ntheme = 3\n", "[app] theme must be a non-empty string, not 3."),
        ('[app]\nmodel = "  "\n', "[app] model must be a non-empty string, not '  '."),
        ('[[models]]\nid = "m"\ntier = 1\n', "[[models]] #1 (m) tier must be a string, not 1."),
        (
            "[gateways.groq]\nbase_url = 3\n",
            "[gateways.groq] base_url must be an http:// or https:// URL",
        ),
        # an unknown key
        (
            "[memory]\nsize = 1\n",
            "[memory] has an unknown key 'size'; known keys: consolidation_model,",
        ),
        ("[app]\ncolour = 1\n", "[app] has an unknown key 'colour'; known keys: model, theme."),
        (
            '[gateways.openai]\nurl = "http://x"\n',
            "[gateways.openai] has an unknown key 'url'; known keys: base_url.",
        ),
        (
            '[[models]]\nid = "m"\nsize = 1\n',
            "[[models]] #1 (m) has an unknown key 'size'; known keys: id,",
        ),
        ("fonts = 1\n", "the file has an unknown key 'fonts'; known keys: app, gateways, models,"),
        # not a table
        ("memory = 3\n", "[memory] must be a table, not 3."),
        ('app = "x"\n', "[app] must be a table, not 'x'."),
        ("transport = [1]\n", "[transport] must be a table, not [1]."),
        ("gateways = { groq = 1 }\n", "[gateways.groq] must be a table, not 1."),
        ("models = [1]\n", "[[models]] #1 must be a table, not 1."),
        # a required key, a value from a list
        ('[[models]]\nlabel = "x"\n', '[[models]] #1 needs an id such as "llama3.2"'),
        (
            '[memory]\nreview = "later"\n',
            '[memory] review must be "after" or "before" or "auto", not \'later\'.',
        ),
        (
            '[[models]]\nid = "m"\nstructured_output = "xml"\n',
            "structured_output must be one of auto, json_schema, json_object, off, not 'xml'.",
        ),
    ],
)
def test_one_formatter_names_file_table_key_and_what_it_takes(text: str, expected: str) -> None:
    problems = _problems(text)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{config_path()}: ")
    assert expected in problems[0]


def test_the_attachments_table_is_known_and_read() -> None:
    assert _problems("[attachments]\npdf_max_pages = 20\n") == ()
    assert load_settings().memory.attachments.pdf_max_pages == 20
    (problem,) = _problems("[attachments]\npdf_max_pages = 0\n")
    assert "[attachments] pdf_max_pages must be" in problem


def test_a_bad_key_loses_nothing_else_of_its_table() -> None:
    _write(
        '[app]\ntheme = "kept-light"\nmodel = 3\n'
        "[memory]\nhedge = false\nreview = 1\nmemory_max_chars = 900\n"
        "[transport]\nretries = 99\nbackoff = 2\n"
        '[gateways.groq]\nbase_url = "http://127.0.0.1:1/v1/"\n'
    )
    settings = load_settings()
    assert len(settings.problems) == 3, settings.problems
    assert settings.app == AppSettings(theme="kept-light")
    assert settings.memory == MemorySettings(hedge=False, memory_max_chars=900)
    policy = RetryPolicy.from_config(settings.catalog.transport)
    assert (policy.retries, policy.backoff) == (RetryPolicy().retries, 2.0)
    assert settings.catalog.gateway_urls == {"groq": "http://127.0.0.1:1/v1"}


def test_a_value_with_control_characters_is_shown_cleaned() -> None:
    problems = _problems('[app]\ntheme = "\\u001b[2Jx"\ncolour\\u0007 = 1\n')
    assert problems and all("\x1b" not in p and "\x07" not in p for p in problems)


def test_code_may_build_settings_past_the_bounds_config_toml_is_held_to() -> None:
    """Tests shrink every figure; the bounds are for what a user writes."""
    assert MemorySettings(attempt_deadline=0.5).attempt_deadline == 0.5
    assert parse_table(MemorySettings, {"attempt_deadline": 0.5}, WHERE)[1]


def test_the_retry_policy_takes_its_defaults_from_the_transport_schema() -> None:
    policy = RetryPolicy()
    for f in fields(TransportTable):
        assert getattr(policy, f.name) == getattr(TransportTable(), f.name), f.name


def test_every_schema_default_is_valid_under_its_own_bounds() -> None:
    for schema in (TransportTable, MemorySettings, AppSettings):
        defaults = schema()
        table = {f.name: getattr(defaults, f.name) for f in fields(schema)}
        assert parse_table(schema, table, WHERE) == (defaults, [])
    assert parse_table(ModelTable, {"id": "m"}, WHERE) == (ModelTable(id="m"), [])
    assert ModelTable(id="m").context_window is None  # its gateway decides (user_model)
    assert GatewayTable().base_url is None  # the gateway's own endpoint


def test_a_local_model_whose_window_is_not_given_gets_a_small_one_not_8192() -> None:
    """A [[models]] entry without context_window on a keyless gateway was sized to 8,192
    tokens while its server ran 2,048: a reply asked for 7,942 and the server overflowed."""
    from catalog.config import DEFAULT_WINDOW, LOCAL_WINDOW, user_model

    assert LOCAL_WINDOW == 2048  # llama-cpp-python's default n_ctx
    assert user_model(ModelTable(id="smollm2")).context_window == LOCAL_WINDOW
    assert user_model(ModelTable(id="smollm2", context_window=4096)).context_window == 4096
    hosted = user_model(ModelTable(id="mine", gateway="deepseek"))
    assert hosted.context_window == DEFAULT_WINDOW == 8192


def test_config_toml_is_parsed_once_per_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, the catalog and the settings each read and parsed the file."""
    from app.cli.main import main
    from app.main import KeptApp

    _write('[app]\ntheme = "kept-light"\n[transport]\nretries = 1\n')
    parsed: list[str] = []
    loads = tomllib.loads

    def counting(text: str) -> dict[str, Any]:
        parsed.append(text)
        return loads(text)

    monkeypatch.setattr(tomllib, "loads", counting)
    assert main(["models", "--all"]) == 0
    assert len(parsed) == 1
    parsed.clear()
    assert main(["doctor"]) in (0, 1)
    assert len(parsed) == 1
    parsed.clear()
    app = KeptApp()
    try:
        assert len(parsed) == 1
        assert app.settings.app.theme == "kept-light"
        assert app.catalog.config.transport["retries"] == 1
    finally:
        app.session.release()
