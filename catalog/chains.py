"""The effective consolidation chain: which models can save memory right now, and why.

A model whose gateway has no key cannot answer, so it is left out of the walk rather than
tried (and reported) on every session; it is still listed, with the reason, for `kept
doctor`, `kept models --all` and /log. The user's models on keyless gateways (a local
server) join the end of every chain, and head it when no hosted gateway has a key: a
local-first user gets memory with no cloud key at all.

When no model can save memory, the plan says why as a `Blocked` kind; the next step is
the app's to word (app/words/models.py), in the chat's words or the shell's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from catalog.catalog import Catalog, Chain
from catalog.models import CONSOLIDATION_HEAD, ModelEntry


@dataclass(frozen=True)
class Member:
    """One model considered for the chain: in it (with why), or left out (with why)."""

    entry: ModelEntry
    included: bool
    why: str
    unreachable: str = ""  # after check_servers(): why its server did not answer

    def line(self) -> str:
        mark = "✗" if not self.included else ("?" if self.unreachable else "✓")
        why = f"{self.why}; {self.unreachable}" if self.unreachable else self.why
        return f"{mark} {self.entry.id} — {why}"


class Blocked(StrEnum):
    """Why no model can save memory, if none can."""

    NOT = ""  # some model can
    NO_MODEL = "no-model"  # no hosted gateway has a key and no local model is declared
    UNREACHABLE = "unreachable"  # every model left is on a server that did not answer


@dataclass(frozen=True)
class ChainPlan:
    """The models a consolidation walks, in order, and every model that was left out."""

    members: tuple[Member, ...]
    blocked: Blocked = Blocked.NOT

    @property
    def chain(self) -> Chain:
        models = tuple(m.entry for m in self.members if m.included)
        return Chain(models, "no further model can save memory")

    @property
    def usable(self) -> bool:
        return any(m.included for m in self.members)

    @property
    def head(self) -> str | None:
        models = self.chain.models
        return models[0].id if models else None

    @property
    def can_answer(self) -> bool:
        """Some model of the walk has a key, or a server that answered check_servers()."""
        return any(m.included and not m.unreachable for m in self.members)

    def lines(self, limit: int = 50) -> list[str]:
        """The walk in order (✓ in it, ? server not answering), then what was left out."""
        ordered = [m for m in self.members if m.included] + [
            m for m in self.members if not m.included
        ]
        rows = [m.line() for m in ordered[:limit]]
        if len(ordered) > limit:
            rows.append(f"… and {len(ordered) - limit:,} more")
        return rows


def check_servers(catalog: Catalog, plan: ChainPlan, timeout: float = 2.0) -> ChainPlan:
    """The plan with each keyless member's server asked whether it answers (once each)."""
    from catalog.probe import reachable

    answers: dict[str, str] = {}
    members = []
    for member in plan.members:
        url = catalog.gateway_of(member.entry).base_url
        if member.included and _keyless(catalog, member.entry) and url:
            if url not in answers:
                problem = reachable(url, timeout)
                answers[url] = f"server not reachable: {problem}" if problem else ""
            member = replace(member, unreachable=answers[url])
        members.append(member)
    blocked = plan.blocked
    if not blocked and not any(m.included and not m.unreachable for m in members):
        blocked = Blocked.UNREACHABLE
    return ChainPlan(tuple(members), blocked)


def _keyless(catalog: Catalog, entry: ModelEntry) -> bool:
    return not catalog.gateway_of(entry).needs_key


def _state(catalog: Catalog, entry: ModelEntry) -> tuple[bool, str]:
    """Whether the model could be called at all (a key, or no key needed), and why."""
    gateway = catalog.gateway_of(entry)
    if not gateway.needs_key:
        return True, f"no key needed ({gateway.base_url})"
    found = catalog.keys.known(gateway)
    if found.usable:
        return True, f"{gateway.label} key from {found.source}"
    return False, f"no key for {gateway.label}"


def _yours(catalog: Catalog, entry: ModelEntry) -> str:
    """A keyless gateway's model: local, or at a host where the transcripts are sent."""
    host = catalog.elsewhere(entry)
    if host:
        return f"your own model at {host}, not on this machine: transcripts are sent there"
    return "your local model"


def _extra_hosted(catalog: Catalog, members: list[Member]) -> list[Member]:
    """A fast model on each gateway that has a key, for a user whose keys the built-in
    chain does not use (only a Gemini or DeepSeek key)."""
    reached = {m.entry.gateway for m in members if m.included}
    extra: list[Member] = []
    for gateway in catalog.gateways.values():
        if not gateway.needs_key or gateway.name in reached:
            continue
        candidates = [e for e in catalog.visible() if e.gateway == gateway.name and not e.user]
        candidates.sort(key=lambda e: e.tier != "fast")
        if candidates and catalog.keys.known(gateway).usable:
            ok, why = _state(catalog, candidates[0])
            extra.append(Member(candidates[0], ok, f"{why}; the fastest model it reaches"))
    return extra


def consolidation_plan(
    catalog: Catalog, chosen: str | None = None, chat_model: str | None = None
) -> ChainPlan:
    """The chain that saves memory: `chosen` ([memory] consolidation_model) when set, else
    the built-in chain of models that have keys; local models at the end, or first when no
    hosted gateway has a key. Raises UnknownModelError for an unknown `chosen`."""
    members: list[Member] = []
    for position, entry in enumerate(catalog.chain(chosen or CONSOLIDATION_HEAD).models):
        ok, why = _state(catalog, entry)
        if chosen and position == 0:
            why = f"[memory] consolidation_model; {why}"
        members.append(Member(entry, ok, why))
    if not chosen and not any(m.included for m in members):
        members += _extra_hosted(catalog, members)
    seen = {m.entry.id for m in members}
    local = [e for e in catalog.entries if e.user and _keyless(catalog, e) and e.id not in seen]
    if chat_model in {e.id for e in local}:
        local.sort(key=lambda e: e.id != chat_model)
    tail = [Member(e, True, f"{_yours(catalog, e)}; {_state(catalog, e)[1]}") for e in local]
    hosted = any(m.included for m in members)
    members = tail + members if not chosen and not hosted else members + tail
    return ChainPlan(tuple(members), Blocked.NOT if hosted or tail else Blocked.NO_MODEL)
