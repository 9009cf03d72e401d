"""The next step, worded for where the user is: in the chat (its slash commands and
screens) or in the shell (commands to type). The layers below say what happened, as a
kind or a fact; only the app tells the user what to do about it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.chains import Blocked
    from catalog.gateways import Gateway

_CHAT_STEP = {
    "no-model": (
        "No model can save memory: add a key with /keys (or `export GROQ_API_KEY=…`), "
        "or point Kept at a local server from the welcome screen."
    ),
    "unreachable": (
        "No model can save memory now: start your local server, add a key with "
        "/keys, or fix [gateways.local] base_url in config.toml."
    ),
}
_SHELL_STEP = {
    "no-model": (
        "No model can save memory: add a key with `keyring set kept <gateway>` (or "
        "`export GROQ_API_KEY=…`), or declare a local server in config.toml ([gateways.local])."
    ),
    "unreachable": (
        "No model can save memory now: start your local server, add a key with "
        "`keyring set kept <gateway>`, or fix [gateways.local] base_url in config.toml."
    ),
}


def chain_fix(blocked: Blocked, *, shell: bool = False) -> str:
    """The one-line fix when no model can save memory ("" when one can)."""
    return (_SHELL_STEP if shell else _CHAT_STEP).get(blocked, "")  # a StrEnum is its value


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
