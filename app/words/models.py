"""The next step, worded for where the user is: in the chat (its slash commands and
screens) or in the shell (commands to type). The layers below say what happened, as a
kind or a fact; only the app tells the user what to do about it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.chains import Blocked
    from catalog.gateways import Gateway
    from catalog.health import ModelHealth

# What to do when no model can save memory, after "No model can save memory: ".
_STEPS = {
    ("no-model", False): "add a key with /keys (or `export GROQ_API_KEY=…`), or point Kept "
    "at a local server from the welcome screen",
    ("unreachable", False): "start your local server, add a key with /keys, or fix "
    "[gateways.local] base_url in config.toml",
    ("no-model", True): "add a key with `keyring set kept <gateway>` (or "
    "`export GROQ_API_KEY=…`), or declare a local server in config.toml ([gateways.local])",
    ("unreachable", True): "start your local server, add a key with "
    "`keyring set kept <gateway>`, or fix [gateways.local] base_url in config.toml",
}
_NO_MODEL = {"no-model": "No model can save memory", "unreachable": "No model can save memory now"}


def blocked_step(blocked: str, *, shell: bool = False) -> str:
    """What to do when no model can save memory (`blocked`: a catalog.chains.Blocked value),
    as a sentence of its own; "" when one can."""
    step = _STEPS.get((blocked, shell), "")
    return f"{step[0].upper()}{step[1:]}." if step else ""


def chain_fix(blocked: Blocked, *, shell: bool = False) -> str:
    """The one-line fix when no model can save memory ("" when one can)."""
    step = _STEPS.get((blocked, shell))  # a StrEnum is its value
    return f"{_NO_MODEL[blocked]}: {step}." if step else ""


def app_model_problem(model: str, *, shell: bool = False) -> str:
    """The sentence for an [app] model Kept does not know (the app and `kept doctor` say
    the same, each with its own way to pick another)."""
    pick = "Pick one from `kept models`." if shell else "Pick one with /model."
    return (
        f"config.toml: [app] model '{model}' is not a model Kept knows; using the default. {pick}"
    )


def missing_key(gateway: Gateway, *, shell: bool = False) -> str:
    """The sentence for a gateway with no key at all, in the keyring or the environment."""
    env = f" or the {gateway.env_var} environment variable" if gateway.env_var else ""
    if not shell:
        return f"No key for {gateway.label}: add one with /keys{env}."
    env = f" or set {gateway.env_var}" if gateway.env_var else ""
    return f"No key for {gateway.label}: store one with `keyring set kept {gateway.name}`{env}."


def health_line(state: ModelHealth, *, shell: bool = False) -> str:
    """A model's health as /log and `kept log` show it: a written-off key says how to fix it."""
    from catalog.health import State

    said = state.describe()
    if state.state is not State.REFUSED:
        return said
    fix = "store a new one with `keyring set kept <gateway>`" if shell else "fix it with /keys"
    return f"{said} ({fix})"
