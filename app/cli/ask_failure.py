"""Why `kept ask` got no answer, in the shell's words: gateways without a key, keys
refused, local servers not listening, anything else, each named once, and the shell's
next step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog import Attempt, Catalog
    from catalog.gateways import Gateway


@dataclass
class Failure:
    """Why no model answered, gathered for one shell message: gateways without a key,
    keys refused, local servers not listening, and anything else, each named once."""

    no_key: list[Gateway] = field(default_factory=list)
    bad_key: list[Gateway] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    def add(self, group: list[Any], item: object) -> None:
        if item not in group:
            group.append(item)

    def sentences(self, catalog: Catalog, model: str, kept: str) -> str:
        """Why, the shell's next step, and what became of the question: three sentences."""
        why = []
        if self.no_key:
            why.append(f"no key for {_or([g.label for g in self.no_key])}")
        if self.bad_key:
            why.append(f"the {_or([g.label for g in self.bad_key])} key was refused")
        if self.servers:
            why.append(f"nothing is listening at {_or(self.servers)}")
        why += self.other[:2]
        gateway = catalog.gateway_of(catalog.get(model))
        keys = [*self.bad_key, *self.no_key]
        if self.servers and (not gateway.needs_key or not keys):
            server = gateway.base_url if gateway.base_url in self.servers else self.servers[0]
            where = "there" if len(self.servers) == 1 else f"at {server}"
            step = f"Start your local server {where}, then ask again."
        elif keys:
            named = gateway if gateway in keys else keys[0]
            env = f" (or set {named.env_var})" if named.env_var else ""
            step = f"Store a key with `keyring set kept {named.name}`{env}, then ask again."
        else:
            step = "Ask again in a moment, or ask another model with -m."
        return (
            f"kept ask: no model could answer ({'; '.join(why) or 'none was tried'}). {step} {kept}"
        )


def _or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _refused(url: str | None, timeout: float = 2.0) -> bool:
    """Whether nothing listens at a server's address: the connection is refused at once (a
    slow server is not refused; the walk waits for it)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url or "")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False
    if not parts.hostname:
        return False
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return False
    except (ConnectionRefusedError, socket.gaierror):
        return True
    except OSError:
        return False


def untriable(catalog: Catalog, model: str) -> Failure | None:
    """Why no model of the chain can even be asked (no key, and no local server listening),
    or None when one can: said at once, rather than after a walk's retries and backoff."""
    failure = Failure()
    for entry in catalog.chain(model).models:
        route = catalog.route(entry)
        if route.gateway.needs_key:
            if route.key.usable:
                return None
            failure.add(failure.no_key, route.gateway)
        elif not route.key.usable:  # a broken [gateways.X] table in config.toml
            failure.add(failure.other, (route.problem or "").rstrip("."))
        elif _refused(route.api_base):
            failure.add(failure.servers, route.api_base)
        else:
            return None
    return failure


def from_attempts(catalog: Catalog, attempts: list[Attempt]) -> Failure:
    """What each model's last attempt says, grouped, in the shell's words."""
    from catalog import Kind

    last: dict[str, Attempt] = {}
    for record in attempts:
        last[record.model] = record
    failure = Failure()
    for record in last.values():
        gateway = catalog.gateways.get(record.gateway)
        if gateway is not None and record.kind is Kind.NO_KEY:
            failure.add(failure.no_key, gateway)
        elif gateway is not None and record.kind is Kind.AUTH:
            failure.add(failure.bad_key, gateway)
        elif gateway is not None and record.kind is Kind.CONNECTION and not gateway.needs_key:
            failure.add(failure.servers, gateway.base_url)
        else:
            reason = record.reason.rstrip(".")
            failure.add(failure.other, f"{record.model}: {reason}"[:90])
    return failure
