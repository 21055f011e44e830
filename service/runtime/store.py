"""The Redis store: key layout, snapshot reads, and the writes of one commit.

Every key of one input stream shares its slot: the keys are prefixed by the stream's name
when it carries a hash tag (`{fide.standard}:events.finished`, the domains layout of
partitions.py), else by `{<stream>}` (the stream's own key hashes to the same slot), so one
MULTI/EXEC covers them on Redis Cluster too. The keys, their types and contents:
`key_layout` below (the Redis keys page of the docs, docs/reference/keys.md, is made from it;
service/timeline.py: order keys and encodings).

The output and dead-letter streams are written in the same transaction: the domains layout
names them with the partition's hash tag; in the single layout on a cluster, name them with
the input stream's (e.g. `{events.finished}:ratings.updated`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, overload

import msgspec

from schemas.events import EventContent, InputMessage
from schemas.records import PlayerRecord, PoolState
from service.rating import MemoryLedger, Needs
from service.readmodel import name_members, pack_message, rank_score
from service.runtime.partitions import key_prefix
from service.timeline import (
    decode_archived,
    domain_pools,
    encode_archived,
    order_key,
    split_member,
)

_record_decoder = msgspec.json.Decoder(PlayerRecord)
_pool_decoder = msgspec.json.Decoder(PoolState)
_encoder = msgspec.json.Encoder()
DATA_FIELD = "__data__"


class StreamKeys:
    """The names of the keys that belong to one input stream. A `namespace` (for a replay
    into fresh keys) prefixes every name and keeps the stream's hash tag."""

    def __init__(self, stream: str, namespace: str | None = None):
        self.stream = stream
        tag = (f"{namespace}:" if namespace else "") + key_prefix(stream)
        self.cursor = f"{tag}:cursor"
        self.pools = f"{tag}:pools"
        self.markers = f"{tag}:markers"
        self.attempts = f"{tag}:attempts"
        self.events = f"{tag}:events"
        self._players = f"{tag}:players"
        self._timeline = f"{tag}:timeline"
        self._history = f"{tag}:history"
        self.results = f"{tag}:results"
        self.catalog = f"{tag}:catalog"
        self._entries = f"{tag}:entries"
        self._ranking = f"{tag}:ranking"
        self._names = f"{tag}:names"

    def players(self, system: str, pool: str) -> str:
        return f"{self._players}:{system}:{pool}"

    def timeline(self, domain: str) -> str:
        return f"{self._timeline}:{domain}"

    def history(self, system: str, pool: str, player_id: str) -> str:
        return f"{self._history}:{system}:{pool}:{player_id}"

    def entries(self, system: str, pool: str, player_id: str) -> str:
        return f"{self._entries}:{system}:{pool}:{player_id}"

    def ranking(self, system: str, pool: str) -> str:
        return f"{self._ranking}:{system}:{pool}"

    def names(self, system: str, pool: str) -> str:
        return f"{self._names}:{system}:{pool}"


class KeyDoc(msgspec.Struct, frozen=True):
    """One Redis key: its name (with <placeholders>), its type and what it holds."""

    name: str
    type: str
    content: str


def key_layout(stream: str) -> tuple[KeyDoc, ...]:
    """Every key of input stream `stream`, named by StreamKeys and StreamLease (<system>,
    <pool>, <id> and <domain> in place of their values), with its type and content: the
    table of docs/reference/keys.md (docs/gen_reference.py)."""
    from service.runtime.leases import StreamLease

    k = StreamKeys(stream)
    lease = StreamLease(stream)
    sp, spi = ("<system>", "<pool>"), ("<system>", "<pool>", "<id>")
    return (
        KeyDoc(k.cursor, "string", "id of the last input entry whose effect is committed"),
        KeyDoc(k.players(*sp), "hash", "player id -> `player.record/v1` JSON"),
        KeyDoc(k.pools, "hash", "`<system>:<pool>` -> pool state JSON (closed FIDE periods)"),
        KeyDoc(
            k.markers,
            "hash",
            "`event:<event_id>` / `period:<system>:<pool>:<period>` -> content digest",
        ),
        KeyDoc(k.attempts, "hash", "entry id -> attempts not yet committed (poison detection)"),
        KeyDoc(
            k.events,
            "hash",
            "event id -> the archived event (MessagePack: order key, current content, revision, "
            "digest of its last results)",
        ),
        KeyDoc(
            k.timeline("<domain>"),
            "sorted set",
            "the domain's events in date order (lexicographic members: order key + event id)",
        ),
        KeyDoc(
            k.history(*spi),
            "sorted set",
            "the player's record before each of their events (order key + packed record)",
        ),
        KeyDoc(
            k.results,
            "hash",
            "event id -> the last `ratings.updated/v1` published for it (MessagePack)",
        ),
        KeyDoc(
            k.entries(*spi),
            "hash",
            "event id (or `list/<period>`) -> order key + the player's history line (MessagePack)",
        ),
        KeyDoc(
            k.ranking(*sp),
            "sorted set",
            "player id, score minus the rating (unrated players: 1,000,000): the ranked list",
        ),
        KeyDoc(
            k.names(*sp),
            "sorted set",
            "`word \\0 id` for each word of a player's name (case and accents folded): the search",
        ),
        KeyDoc(
            k.catalog,
            "hash",
            "`<system>:<pool>` -> time (ms) of the last input entry (or import) that changed the pool",
        ),
        KeyDoc(
            lease.key,
            "string",
            "`<token> <consumer>`, expiring after RATING_LEASE_MS: the replica that owns the stream",
        ),
        KeyDoc(
            lease.fence_key,
            "string",
            "the same value without expiry, written only when a lease is taken (every commit "
            "WATCHes it)",
        ),
        KeyDoc(lease.token_key, "string", "the fencing token counter (INCR on every acquisition)"),
        KeyDoc(
            lease.replicas_key,
            "sorted set",
            "consumer -> heartbeat expiry (ms): the live replicas",
        ),
    )


def entry_order(entry_id: str) -> tuple[int, int]:
    """A stream entry id ("1700000000000-3") as a sortable pair."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


@overload
def text(value: bytes | str) -> str: ...
@overload
def text(value: None) -> None: ...
@overload
def text(value: bytes | str | None) -> str | None: ...


def text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def decode_record(raw: bytes) -> PlayerRecord:
    return _record_decoder.decode(raw)


def encode(message: Any) -> bytes:
    return _encoder.encode(message)


def watched_keys(keys: StreamKeys, wants: Iterable[Needs], cascade: bool = False) -> list[str]:
    """The pool hashes a batch reads (for a cascade: every pool of the domain): watched with
    the cursor, so that a write outside the cursor protocol (an import) between the read and
    the commit makes the commit retry."""
    pools: set[str] = set()
    for want in wants:
        if cascade:
            pools.update(keys.players(system, pool) for system, pool in domain_pools(want.domain))
        pools.add(keys.players(want.system, want.pool))
        if want.seed_pool is not None:
            pools.add(keys.players(want.system, want.seed_pool))
    return sorted(pools)


def queue_ledger_reads(
    pipe: Any, keys: StreamKeys, wants: list[Needs]
) -> Callable[[list], MemoryLedger]:
    """Queue on `pipe` the reads of everything a batch of messages needs; returns the
    function that builds, from their replies (in order), the MemoryLedger the batch is then
    applied to (the same code path as the offline `rate`)."""
    whole = sorted({(w.system, w.pool) for w in wants if w.player_ids is None})
    some: dict[tuple[str, str], set[str]] = {}
    for want in wants:
        if want.player_ids is None:
            continue
        for pool in (want.pool, want.seed_pool):
            if pool is not None and (want.system, pool) not in whole:
                some.setdefault((want.system, pool), set()).update(want.player_ids)
    # A withdrawal names no players (ids ()): HMGET with no field is an error, so skip it.
    some_keys = [(key, sorted(ids)) for key, ids in sorted(some.items()) if ids]
    pool_fields = sorted({f"{w.system}:{w.pool}" for w in wants})
    markers = sorted({w.marker for w in wants})
    # Events: is each in date order? A period's close (player_ids None): when did the pool's
    # last event end? The timeline's tail says both. (A withdrawal, ids (), reads its own.)
    domains = sorted({w.domain for w in wants if w.player_ids is None or w.player_ids})
    for system, pool in whole:
        pipe.hgetall(keys.players(system, pool))
    for (system, pool), ids in some_keys:
        pipe.hmget(keys.players(system, pool), ids)
    for domain in domains:
        pipe.zrange(keys.timeline(domain), -1, -1)
    if wants:
        pipe.hmget(keys.pools, pool_fields)
        pipe.hmget(keys.markers, markers)

    def build(replies: list) -> MemoryLedger:
        if not wants:
            return MemoryLedger()
        records: list[PlayerRecord] = []
        for reply in replies[: len(whole)]:
            records.extend(decode_record(raw) for raw in reply.values())
        at = len(whole) + len(some_keys)
        for reply in replies[len(whole) : at]:
            records.extend(decode_record(raw) for raw in reply if raw is not None)
        pools = [_pool_decoder.decode(raw) for raw in replies[-2] if raw is not None]
        found = {m: text(d) for m, d in zip(markers, replies[-1]) if d is not None}
        ledger = MemoryLedger(records, pools, found)
        for domain, tail in zip(domains, replies[at : at + len(domains)]):
            if tail:
                ledger.timelines[domain] = list(tail)
        return ledger

    return build


async def load_cascade(  # noqa: C901
    client: Any, keys: StreamKeys, message: InputMessage, want: Needs, arrival: int
) -> MemoryLedger:
    """Read what re-rating from `message`'s place needs (inside the commit's WATCH): its
    archive, the domain's events from the earliest place it touches, their players'
    records and histories from there, and the domain's pool states."""
    domain = want.domain
    async with client.pipeline(transaction=False) as reads:
        reads.hget(keys.events, want.revises or "")
        reads.hget(keys.markers, want.marker)
        archived_raw, marker = await reads.execute()
    archived = decode_archived(archived_raw) if archived_raw is not None and want.revises else None
    ledger = MemoryLedger(markers={want.marker: text(marker)} if marker is not None else None)
    starts = []
    if isinstance(message, EventContent):
        starts.append(
            order_key(message, int.from_bytes(archived.key[9:], "big") if archived else arrival)
        )
    if archived is not None:
        ledger.archives[archived.event.event_id] = archived
        if not archived.withdrawn:
            starts.append(archived.key)
    if not starts:  # withdrawal of an unknown event: process() says why
        return ledger
    start = min(starts)
    members = await client.zrange(keys.timeline(domain), b"[" + start, b"+", bylex=True)
    ledger.timelines[domain] = list(members)
    ids = sorted({split_member(m)[1].decode() for m in members} - set(ledger.archives))
    players: set[str] = set()
    for archive in ledger.archives.values():
        players.update(p.id for p in archive.event.players)
    if isinstance(message, EventContent):
        players.update(p.id for p in message.players)
    for first in range(0, len(ids), 1_000):
        chunk = ids[first : first + 1_000]
        for raw in await client.hmget(keys.events, chunk):
            archive = decode_archived(raw)
            ledger.archives[archive.event.event_id] = archive
            players.update(p.id for p in archive.event.players)
    pools = domain_pools(domain)
    ordered = sorted(players)
    async with client.pipeline(transaction=False) as reads:
        reads.hmget(keys.pools, [f"{system}:{pool}" for system, pool in pools])
        for system, pool in pools:
            if ordered:
                reads.hmget(keys.players(system, pool), ordered)
            for pid in ordered:
                reads.zrange(keys.history(system, pool, pid), b"[" + start, b"+", bylex=True)
        replies = await reads.execute()
    for raw in replies[0]:
        if raw is not None:
            state = _pool_decoder.decode(raw)
            ledger.pools[(state.system, state.pool)] = state
    at = 1
    for system, pool in pools:
        if not ordered:
            continue
        for raw in replies[at]:
            if raw is not None:
                record = decode_record(raw)
                ledger.records.setdefault((system, pool), {})[record.id] = record
        for pid, history in zip(ordered, replies[at + 1 : at + 1 + len(ordered)]):
            if history:
                ledger.histories[(system, pool, pid)] = list(history)
        at += 1 + len(ordered)
    return ledger


def queue_ledger_writes(
    pipe: Any, keys: StreamKeys, ledger: MemoryLedger, stamp: int | None = None
) -> None:
    """Queue, inside MULTI, what the batch changed: records, pool states, markers, the
    archive, timelines and histories, and the read model (`stamp`: the time, in ms, of
    the last input entry of the commit, kept as the pools' last update)."""
    by_key: dict[str, dict[str, bytes]] = {}
    for (system, pool, pid), record in ledger.changed_records.items():
        by_key.setdefault(keys.players(system, pool), {})[pid] = encode(record)
    for key, mapping in by_key.items():
        pipe.hset(key, mapping=mapping)
    if ledger.changed_pools:
        pipe.hset(
            keys.pools,
            mapping={f"{s}:{p}": encode(state) for (s, p), state in ledger.changed_pools.items()},
        )
    if ledger.changed_markers:
        pipe.hset(keys.markers, mapping=ledger.changed_markers)
    if ledger.changed_archives:
        pipe.hset(
            keys.events,
            mapping={eid: encode_archived(a) for eid, a in ledger.changed_archives.items()},
        )
    for domain, changes in ledger.timeline_changes.items():
        _queue_member_changes(pipe, keys.timeline(domain), changes)
    # Histories: the members appended (every event in date order adds one per player) go in
    # one command for the whole commit; a cascade's removals and replacements per key.
    append_keys: list[str] = []
    append_members: list[bytes] = []
    for (system, pool, pid), changes in ledger.history_changes.items():
        key = keys.history(system, pool, pid)
        if changes.removed:
            _queue_member_changes(pipe, key, changes)
            continue
        for member in changes.added:
            append_keys.append(key)
            append_members.append(member)
    if append_keys:
        pipe.eval(_ZADD_EACH, len(append_keys), *append_keys, *append_members)
    queue_read_model(pipe, keys, ledger, stamp)


# Events' messages per HSET of {S}:results: a commit's (64 entries) in one; a correction's
# cascade (hundreds of revisions of tens of kB) in several, so that no command is tens of MB.
RESULTS_PER_HSET = 64


def queue_read_model(pipe: Any, keys: StreamKeys, ledger: MemoryLedger, stamp: int | None) -> None:
    """The read model's writes of a commit (service/readmodel.py): the events' last messages,
    the players' history lines, the pools' rankings and name indexes, the last updates."""
    results = list(ledger.changed_results.items())
    for first in range(0, len(results), RESULTS_PER_HSET):  # a cascade's revisions: several HSETs
        pipe.hset(
            keys.results,
            mapping={eid: pack_message(m) for eid, m in results[first : first + RESULTS_PER_HSET]},
        )
    set_args: list[Any] = []
    set_keys: list[str] = []
    for (system, pool, pid), fields in ledger.changed_entries.items():
        key = keys.entries(system, pool, pid)
        gone = [f for f, v in fields.items() if v is None]
        if gone:
            pipe.hdel(key, *gone)
        for field, value in fields.items():
            if value is not None:
                set_keys.append(key)
                set_args += (field, value)
    if set_keys:
        pipe.eval(_HSET_EACH, len(set_keys), *set_keys, *set_args)
    queue_indexes(
        pipe,
        keys,
        ((ledger.previous_records.get(who), r) for who, r in ledger.changed_records.items()),
    )
    if stamp is not None:
        pools = {(s, p) for s, p, _ in ledger.changed_records} | {
            (s, p) for s, p, _ in ledger.changed_entries
        }
        pools |= {(m.system, m.pool) for m in ledger.changed_results.values()}
        if pools:
            pipe.hset(keys.catalog, mapping={f"{s}:{p}": stamp for s, p in sorted(pools)})


def queue_indexes(
    pipe: Any, keys: StreamKeys, changes: Iterable[tuple[PlayerRecord | None, PlayerRecord]]
) -> None:
    """Keep the rankings and name indexes of the records that changed (old, new): one ZADD
    per pool, and one command for the name changes of the whole commit."""
    scores: dict[str, dict[str, int]] = {}
    swap_keys: list[str] = []
    swap_args: list[bytes] = []
    for old, new in changes:
        if old is None or rank_score(old) != rank_score(new):
            scores.setdefault(keys.ranking(new.system, new.pool), {})[new.id] = rank_score(new)
        if old is None or old.name != new.name:
            names = keys.names(new.system, new.pool)
            gone = set(name_members(old)) if old is not None else set()
            fresh = set(name_members(new))
            for member in sorted(gone - fresh):
                swap_keys.append(names)
                swap_args += (member, b"")
            for member in sorted(fresh - gone):
                swap_keys.append(names)
                swap_args += (b"", member)
    for key, mapping in scores.items():
        pipe.zadd(key, mapping)
    if swap_keys:
        pipe.eval(_ZSWAP_EACH, len(swap_keys), *swap_keys, *swap_args)


# HSET KEYS[i] ARGV[2i-1] ARGV[2i] for every i (one command for a commit's history lines).
_HSET_EACH = (
    "for i = 1, #KEYS do redis.call('HSET', KEYS[i], ARGV[2*i-1], ARGV[2*i]) end return #KEYS"
)
# For every i: ZREM KEYS[i] ARGV[2i-1] (if not empty), ZADD KEYS[i] 0 ARGV[2i] (if not empty).
_ZSWAP_EACH = (
    "for i = 1, #KEYS do local old, new = ARGV[2*i-1], ARGV[2*i] "
    "if old ~= '' then redis.call('ZREM', KEYS[i], old) end "
    "if new ~= '' then redis.call('ZADD', KEYS[i], 0, new) end end return #KEYS"
)


# ZADD KEYS[i] 0 ARGV[i] for every i: one round of command packing for a whole commit's history
# members (all keys share the stream's hash tag, so one slot on a cluster).
_ZADD_EACH = "for i = 1, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[i]) end return #KEYS"


def _queue_member_changes(pipe: Any, key: str, changes: Any) -> None:
    if changes.removed:
        pipe.zrem(key, *changes.removed)
    if changes.added:
        pipe.zadd(key, dict.fromkeys(changes.added, 0))


def xadd(client: Any, stream: str, data: bytes) -> Any:
    """Append one message as plain JSON in `__data__` (the wire contract, docs/reference/contract.md)."""
    return client.xadd(stream, {DATA_FIELD: data})


async def import_records(
    client: Any,
    keys: StreamKeys,
    records: list[PlayerRecord],
    stamp: int | None = None,
    batch: int = 1_000,
) -> tuple[int, int]:
    """Write records into their pools (replacing what is there), with their rankings and
    name indexes; `stamp` (ms, default now) is the pools' last update. Returns (new, replaced)."""
    from service.runtime.connection import on_owner  # imports redis: not for the offline commands

    stamp = time.time_ns() // 1_000_000 if stamp is None else stamp
    new = replaced = 0
    for start in range(0, len(records), batch):
        chunk = records[start : start + batch]
        async with client.pipeline(transaction=False) as pipe:
            for record in chunk:
                pipe.hget(keys.players(record.system, record.pool), record.id)
            olds = [decode_record(raw) if raw is not None else None for raw in await pipe.execute()]
        replaced += sum(old is not None for old in olds)
        new += sum(old is None for old in olds)

        async def write(owner: Any, chunk: list[PlayerRecord] = chunk, olds: list = olds) -> None:
            async with owner.pipeline(transaction=True) as pipe:
                for record in chunk:
                    pipe.hset(keys.players(record.system, record.pool), record.id, encode(record))
                queue_indexes(pipe, keys, zip(olds, chunk))
                pipe.hset(keys.catalog, mapping={f"{r.system}:{r.pool}": stamp for r in chunk})
                await pipe.execute()

        await on_owner(client, keys.catalog, write)
    return new, replaced


def glob_escape(text_: str) -> str:
    """A literal for a Redis MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text_)


async def live_pools(client: Any, keys: StreamKeys) -> list[tuple[str, str]]:
    """The (system, pool) pairs that have a players hash under `keys`."""
    prefix = keys.players("", "")[:-1]  # "...:players:"
    pools = set()
    async for key in client.scan_iter(match=glob_escape(prefix) + "*", count=1_000):
        system, _, pool = text(key)[len(prefix) :].partition(":")
        pools.add((system, pool))
    return sorted(pools)


async def export_records(
    client: Any, keys: StreamKeys, system: str, pool: str
) -> list[PlayerRecord]:
    """Every record of one pool, by player id."""
    records = []
    async for _, raw in client.hscan_iter(keys.players(system, pool), count=1_000):
        records.append(decode_record(raw))
    return sorted(records, key=lambda r: r.id)


# ---------------------------------------------------------------------------- dead letters
# The dead-letter stream stays an append-only audit: a redrive (`rating-service rejected
# redrive`) re-appends the letter's message to its input stream and records, in the stream's
# redrive ledger, which entry it became. Redis runs each script atomically, so a redrive
# appends and records together, and two people redriving the same letter at once do it once.


def redriven_key(dead_letter_stream: str) -> str:
    """The redrive ledger of a dead-letter stream: hash dead-letter id -> the input entry id it
    was re-appended as (the last one, after a redrive `--again`). Named after the stream: with
    a dead-letter stream named with the input stream's hash tag (as a cluster needs, e.g.
    `{events.finished}:events.rejected`), the ledger and the input stream share a slot."""
    return f"{dead_letter_stream}:redriven"


# KEYS: input stream, ledger; ARGV: dead-letter id, __data__, "1" to redrive again.
# Returns {1, new entry id}, or {0, the entry id it was redriven as before}.
REDRIVE = (
    "if ARGV[3] ~= '1' and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then "
    "return {0, redis.call('HGET', KEYS[2], ARGV[1])} end "
    f"local id = redis.call('XADD', KEYS[1], '*', '{DATA_FIELD}', ARGV[2]) "
    "redis.call('HSET', KEYS[2], ARGV[1], id) return {1, id}"
)

OLDEST_OPEN_PAGES = 20  # pages of 50 letters: the walk's bound
# KEYS: dead-letter stream, ledger; ARGV: most pages. The id of the first letter not in the
# ledger (false: none); when the bound is reached, the last letter looked at (its age is
# then more than the true one's: an alert fires early rather than late).
_OLDEST_OPEN = (
    "local start = '-' local last = false "
    "for page = 1, tonumber(ARGV[1]) do "
    "local entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', 50) "
    "if #entries == 0 then return false end "
    "for _, e in ipairs(entries) do "
    "if redis.call('HEXISTS', KEYS[2], e[1]) == 0 then return e[1] end last = e[1] end "
    "start = '(' .. last end "
    "return last"
)


async def oldest_open_dead_letter(client: Any, dead_letter_stream: str) -> str | None:
    """The id of the oldest dead letter not redriven (None when none), found in Redis without
    shipping the letters: at most OLDEST_OPEN_PAGES x 50 are looked at (`rejected purge`
    keeps the redriven ones at the head of the stream few)."""
    found = await client.eval(
        _OLDEST_OPEN, 2, dead_letter_stream, redriven_key(dead_letter_stream), OLDEST_OPEN_PAGES
    )
    return text(found)
