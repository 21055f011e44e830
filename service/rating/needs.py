"""Before a message is applied: which engine rates it, its idempotency marker, and what the
store must read for it (`Needs`)."""

from __future__ import annotations

import hashlib

import msgspec

from schemas.events import (
    EventContent,
    EventCorrected,
    EventWithdrawn,
    InputMessage,
    PeriodClosed,
    PeriodReopened,
)
from schemas.validation import default_ruleset
from service.engine.contract import Engine
from service.engine.registry import Registry, rates_pool
from service.rating.effects import Rejected


class Needs(msgspec.Struct, frozen=True):
    """What to read before applying a message: the pool, the player ids (None: all of
    the pool), the seed pool (if any), the idempotency marker's key, the ordering domain
    and its pools, the order key's prefix (`Engine.order_prefix`) and, for a correction or
    withdrawal, the event id whose archive decides the rest."""

    system: str
    pool: str
    player_ids: tuple[str, ...] | None
    seed_pool: str | None
    marker: str
    domain: str = ""
    revises: str | None = None
    domain_pools: tuple[tuple[str, str], ...] = ()
    order_prefix: int = 0


def marker_key(message: InputMessage) -> str:
    """The idempotency key: an event's id; a period's (system, pool, period): a reopen's is
    its close's (it marks the close undone)."""
    if isinstance(message, PeriodClosed | PeriodReopened):
        return f"period:{message.system}:{message.pool}:{message.period}"
    return f"event:{message.event_id}"


_json = msgspec.json.Encoder()


def content_digest(message: InputMessage) -> str:
    """A digest of the normalized message: equal content, equal digest."""
    return hashlib.sha256(_json.encode(message)).hexdigest()


def engine_for(message: InputMessage | EventContent, registry: Registry) -> Engine:
    """The engine of the message's system and ruleset (Rejected when there is none, or when it
    does not rate the message's pool)."""
    if isinstance(message, PeriodReopened):  # no ruleset: the pool's rules (one per system)
        ruleset = default_ruleset(message.system, message.pool or "")
    else:
        ruleset = getattr(message, "ruleset", None) or ""
    engine = registry.get(message.system, ruleset)
    if engine is None:
        known = ", ".join(registry.rulesets(message.system)) or "none yet"
        raise Rejected(
            "unknown_system",
            f"no engine for system {message.system!r} ruleset {ruleset!r} (available: {known})",
            "$.ruleset" if registry.rulesets(message.system) else "$.system",
            getattr(message, "event_id", None),
        )
    if message.pool is None or not rates_pool(engine, message.pool):
        raise Rejected(
            "invalid", f"ruleset {engine.ruleset} does not rate pool {message.pool!r}", "$.pool"
        )
    return engine


def needs(message: InputMessage, registry: Registry) -> Needs:
    """What `apply_message` will need read from the store (raises Rejected for an unknown
    engine)."""
    assert message.pool is not None  # normalized
    marker = marker_key(message)
    domain = registry.domains.of(message.system, message.pool)
    pools = tuple(registry.domains.pools(domain))
    if isinstance(message, EventWithdrawn):
        return Needs(
            message.system, message.pool, (), None, marker, domain, message.event_id, pools
        )
    engine = engine_for(message, registry)
    if isinstance(message, EventContent):
        ids = tuple([p.id for p in message.players])
        revises = message.event_id if isinstance(message, EventCorrected) else None
        return Needs(
            message.system,
            message.pool,
            ids,
            engine.seed_pools.get(message.pool),
            marker,
            domain,
            revises,
            pools,
            engine.order_prefix(message),
        )
    return Needs(message.system, message.pool, None, None, marker, domain, None, pools)
