"""The look before a producing command appends (docs/guides/mistakes.md): what the store says
of the players of an event `publish` or `correct` sends, of the event `withdraw` names, of the
period `close-period` closes. The rules are small functions of what was read (unit-tested);
the look-ups read the store's own keys (service/runtime/keys.py StreamKeys) and, for a close,
what the service itself reads and decides (service/rating/apply.py `apply_message`).

A finding is a warning (printed, the message is sent) or a refusal (UserError: one line, exit
2, nothing appended): an event most of whose players have no record (`--new-players`), a name
that is not the record's (`--accept-names`), an unknown event id, a close that is not due.
Before all of them, every writing command (these, `import`, `rejected redrive`) looks for the
target stores' identity records (`require_stores`: no record, no service reads the store;
service/runtime/storeid.py). `--no-check` skips the look-up.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from schemas.events import EventContent, EventWithdrawn, InputMessage, PeriodClosed
from schemas.records import PlayerRecord
from service.cli.errors import UserError
from service.cli.trffile import TrfEvent
from service.engine.registry import Registry, default_registry
from service.rating import Duplicate, Rejected, apply_message, needs
from service.readmodel import fold
from service.runtime.keys import StreamKeys
from service.runtime.store import decode_record, queue_ledger_reads
from service.timeline import decode_archived

SHOWN = 5  # players or ids named in one line, then "and N more"
CLOSEST = 3  # known event ids suggested for an unknown one


@dataclass(frozen=True)
class Options:
    """What the user allowed: rating an event of mostly new players, names that differ."""

    new_players: bool = False
    accept_names: bool = False


@dataclass
class Findings:
    """What the look found: lines to print, each `note:` or `warning:` (the message is sent),
    and refusals (it is not)."""

    warnings: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- the rules
def name_key(name: str) -> tuple[str, ...]:
    """A name as compared with a record's: its words, folded for accents and case, in any
    order ("Lapointe, Luc" and "luc lapointe" have the same key; "Ólafsson" = "olafsson")."""
    words = "".join(c if c.isalnum() else " " for c in fold(name)).split()
    return tuple(sorted(words))


def same_name(given: str, recorded: str) -> bool:
    """Whether an event's name for a player is the record's name (name_key)."""
    return name_key(given) == name_key(recorded)


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _who(player_id: str, name: str | None) -> str:
    return f"{player_id} ({name})" if name else player_id


def unknown_players(
    event: EventContent,
    records: Mapping[str, PlayerRecord],
    options: Options,
    findings: Findings,
    earlier: Set[str] = frozenset(),
) -> None:
    """Players with no record (nor an `earlier` event of the batch) are rated as new
    players: said; more than half of the event's players, refused without --new-players
    (the list was not imported yet?)."""
    unknown = [p for p in event.players if p.id not in records and p.id not in earlier]
    if not unknown:
        return
    where = f"{event.event_id}: {len(unknown)} of {len(event.players)} players have no record in {event.system}/{event.pool}"
    if 2 * len(unknown) > len(event.players) and not options.new_players:
        findings.refusals.append(
            f"{where}: import the list first? (--new-players rates them as new players)"
        )
        return
    ids = [_who(p.id, p.name) for p in unknown]
    findings.warnings.append(f"note: {where}, rated as new players: {_listed(ids)}")


def differing_names(
    event: EventContent, records: Mapping[str, PlayerRecord], options: Options, findings: Findings
) -> None:
    """A player whose name in the event is not the record's (a wrong id rates the wrong
    person): refused without --accept-names, else said."""
    differing = [
        f"{p.id} is {record.name!r} in the store, {p.name!r} in the event"
        for p in event.players
        if p.name
        and (record := records.get(p.id)) is not None
        and record.name
        and not same_name(p.name, record.name)
    ]
    if not differing:
        return
    names = "1 name differs" if len(differing) == 1 else f"{len(differing)} names differ"
    where = f"{event.event_id}: {names} from the record with the same id"
    if options.accept_names:
        findings.warnings.append(f"warning: {where} (accepted): {_listed(differing)}")
    else:
        findings.refusals.append(
            f"{where}: {_listed(differing)} (a wrong id? --accept-names rates them anyway)"
        )


def differing_ratings(
    event: EventContent,
    records: Mapping[str, PlayerRecord],
    given: Mapping[str, int | None],
    findings: Findings,
) -> None:
    """A rating in the file (a TRF's 001 columns 49-52) that is not the stored one: said once
    per player (the service rates from the store, not from the file)."""
    for p in event.players:
        record = records.get(p.id)
        rating = given.get(p.id)
        if record is None or not rating or rating == record.rating:
            continue
        stored = record.rating if record.rating is not None else "unrated"
        findings.warnings.append(
            f"warning: {event.event_id}: {_who(p.id, p.name)} is {rating} in the file, {stored} in "
            f"{event.system}/{event.pool} (the service rates from the store)"
        )


def event_findings(
    event: EventContent,
    records: Mapping[str, PlayerRecord],
    options: Options,
    given: Mapping[str, int | None] | None = None,
    earlier: Set[str] = frozenset(),
) -> Findings:
    """Every finding about one event's players, from the records found for them (`given`:
    the file's ratings by player id; `earlier`: players of earlier events of the batch)."""
    findings = Findings()
    unknown_players(event, records, options, findings, earlier)
    differing_names(event, records, options, findings)
    differing_ratings(event, records, given or {}, findings)
    return findings


def closest_ids(wanted: str, known: Iterable[str]) -> list[str]:
    """The known event ids nearest to a mistyped one (difflib's ratio, best first)."""
    return difflib.get_close_matches(wanted, list(known), n=CLOSEST, cutoff=0.6)


def _either(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def unknown_event(event_id: str, stream: str, known: Iterable[str]) -> str:
    """The line for a withdrawal of an event id the stream never rated."""
    near = closest_ids(event_id, known)
    hint = f": did you mean {_either(near)}?" if near else ""
    return f"event {event_id!r} is not a rated event of stream {stream}{hint}"


# ---------------------------------------------------------------------------- the look-ups
async def require_stores(client: Any, args: Any, layout: Any, streams: Iterable[str]) -> None:
    """Before a writing command appends to (or loads into) `streams`: UserError unless each
    one's store has its identity record, of this store format and not migrated away (decision
    D17); with RATING_CREATE_STORE=true a store without one gets it. `--no-check` skips it."""
    from service.cli.settings import cli_settings, redis_url
    from service.runtime.settings import redact
    from service.runtime.storeid import (
        BEFORE_FORMATS,
        StoreRefused,
        decode,
        encode,
        probe,
        record_for,
    )

    if getattr(args, "no_check", False):
        return
    for stream in dict.fromkeys(streams):
        found = await probe(client, stream)
        if found.raw is not None:
            try:
                record = decode(found.raw, stream)
            except StoreRefused as exc:
                raise UserError(f"{exc}; nothing appended") from None
            if record.migrated_to is not None:
                raise UserError(
                    f"the store of {stream} was migrated to the {record.migrated_to} layout: no "
                    f"service reads {stream} any more (give no --stream: the commands route to "
                    f"the partitions; RATING_PARTITIONS={record.migrated_to}); nothing appended"
                )
            continue
        url = redact(redis_url(args))
        if cli_settings().create_store:
            own, partition = _own_layout(layout, stream)
            earlier = BEFORE_FORMATS if found.keys else None
            record = record_for(own, partition, upgraded_from=earlier)
            await client.set(found.key, encode(record), nx=True)
            continue
        if found.keys:
            raise UserError(
                f"the store of {stream} at {url} was written before store format 1: run "
                "`rating-service upgrade-store` (--no-check appends anyway); nothing appended"
            )
        raise UserError(
            f"no store at {url} for {stream}: is serve running against this Redis? a new "
            "deployment: run `rating-service init-store` once (--no-check appends anyway); "
            "nothing appended"
        )


def _own_layout(layout: Any, stream: str) -> tuple[Any, Any]:
    """The layout and partition a store of `stream` belongs to (a partition's own stream given
    with --stream is the domains layout's, routing.layout_for makes it a single one)."""
    from service.runtime.keys import untagged
    from service.runtime.partitions import layout_of

    partition = layout.of_stream(stream)
    if layout.layout == "single" and partition.name != partition.input:
        first = layout.partitions[0]
        whole = layout_of(
            "domains", (untagged(stream),), untagged(first.output), untagged(first.dead_letter)
        )
        return whole, whole.of_stream(stream)
    return layout, partition


async def pool_records(
    client: Any, keys: StreamKeys, system: str, pools: Sequence[str], ids: Sequence[str]
) -> dict[str, PlayerRecord]:
    """The stored records of `ids`, from the first of `pools` that has each (the event's
    pool, then the pool that seeds it)."""
    found: dict[str, PlayerRecord] = {}
    if not ids:
        return found
    async with client.pipeline(transaction=False) as pipe:
        for pool in pools:
            pipe.hmget(keys.players(system, pool), list(ids))
        replies = await pipe.execute()
    for raws in replies:
        for pid, raw in zip(ids, raws):
            if raw is not None and pid not in found:
                found[pid] = decode_record(raw)
    return found


def _seed_pool(registry: Registry, event: EventContent) -> list[str]:
    engine = registry.get(event.system, event.ruleset or "")
    seed = engine.seed_pools.get(event.pool or "") if engine is not None else None
    return [event.pool or "", *([seed] if seed else [])]


async def check_events(
    client: Any,
    routed: Sequence[tuple[StreamKeys, InputMessage]],
    options: Options,
    given: Mapping[str, int | None] | None = None,
) -> list[str]:
    """The look before events are sent: the warnings to print; UserError (every refusal,
    one per line) when one would do harm. A player of an earlier event of the same batch
    counts as known (the service will have rated them first)."""
    registry = default_registry()
    seen: dict[tuple[str, str, str], set[str]] = {}
    findings = Findings()
    for keys, message in routed:
        if not isinstance(message, EventContent):
            continue
        ids = [p.id for p in message.players]
        records = await pool_records(
            client, keys, message.system, _seed_pool(registry, message), ids
        )
        earlier = seen.setdefault((keys.stream, message.system, message.pool or ""), set())
        found = event_findings(message, records, options, given, earlier)
        findings.warnings += found.warnings
        findings.refusals += found.refusals
        earlier.update(ids)
    if findings.refusals:
        raise UserError("\n".join(findings.refusals) + "; nothing appended")
    return findings.warnings


async def check_withdraw(client: Any, keys: StreamKeys, message: EventWithdrawn) -> str | None:
    """Before a withdrawal: UserError for an event the stream never rated (naming the
    closest known ids) or one rated in another system or pool; a line to print instead of
    sending when it is withdrawn already (a duplicate changes nothing); None: send it."""
    raw = await client.hget(keys.events, message.event_id)
    if raw is None:
        known = [k.decode() for k in await client.hkeys(keys.events)]
        raise UserError(unknown_event(message.event_id, keys.stream, known) + "; nothing appended")
    archived = decode_archived(raw)
    event = archived.event
    if (event.system, event.pool) != (message.system, message.pool):
        raise UserError(
            f"event {message.event_id!r} was rated in {event.system}/{event.pool}, not "
            f"{message.system}/{message.pool}: give --system {event.system} --pool {event.pool}"
            "; nothing appended"
        )
    if archived.withdrawn:
        return f"event {message.event_id!r} is withdrawn already, nothing to do"
    return None


async def check_close(client: Any, keys: StreamKeys, message: PeriodClosed) -> str | None:
    """Before a close: what the service would decide, from what it would read (the pool's
    records, its state, the end of its last event: service/rating/apply.py `_close`).
    UserError when it would refuse the close (not due, closed already); a line to print
    instead of sending when this close was applied already; None: send it."""
    registry = default_registry()
    try:
        want = needs(message, registry)
    except Rejected:
        return None  # no engine for it: the service dead-letters it, with its reason
    async with client.pipeline(transaction=False) as pipe:
        ledger_of = queue_ledger_reads(pipe, keys, [want])
        replies = await pipe.execute()
    try:
        outcome = apply_message(ledger_of(replies), message, registry, "check")
    except Rejected as exc:
        raise UserError(f"{exc.message} ({exc.reason}); nothing appended") from None
    if isinstance(outcome, Duplicate):
        return f"period {message.period} of {message.system}/{message.pool} is closed already, nothing to do"
    return None


# ---------------------------------------------------------------------------- the commands
def add_check_options(p: Any, *, events: bool = True) -> None:
    """The look's options of a producing command (`events`: it sends events, whose players
    are looked up)."""
    if events:
        p.add_argument(
            "--new-players",
            action="store_true",
            help="rate an event most of whose players have no record (else refused: import the list first?)",
        )
        p.add_argument(
            "--accept-names",
            action="store_true",
            help="rate players whose name differs from their record's (else refused: a wrong id?)",
        )
    p.add_argument(
        "--no-check",
        action="store_true",
        help="append without looking the store up first (for scripts; the service still checks)",
    )


async def before_append(
    client: Any,
    args: Any,
    routed: Sequence[tuple[StreamKeys, InputMessage]],
    given: Mapping[str, int | None] | None = None,
) -> str | None:
    """The look of a producing command before it appends `routed` (each message with the
    keys of its partition): the warnings printed on standard error; UserError for a
    refusal; a line to print instead of sending when there is nothing to do; None: send."""
    if getattr(args, "no_check", False):
        return None
    options = Options(
        new_players=getattr(args, "new_players", False),
        accept_names=getattr(args, "accept_names", False),
    )
    for line in await check_events(client, routed, options, given):
        print(line, file=sys.stderr)
    for keys, message in routed:
        if isinstance(message, EventWithdrawn) and len(routed) == 1:
            return await check_withdraw(client, keys, message)
        if isinstance(message, PeriodClosed) and len(routed) == 1:
            return await check_close(client, keys, message)
    return None


def file_ratings(found: TrfEvent) -> dict[str, int | None]:
    """A TRF's ratings (001 columns 49-52) by player id, to compare with the store's."""
    return {found.ids[p.start]: p.rating for p in found.tournament.players if p.start in found.ids}
