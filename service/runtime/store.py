"""The Redis store: snapshot reads, and the writes of one commit.

The keys are named by service/runtime/keys.py (StreamKeys; their types and contents:
`key_layout`, the Redis keys page docs/reference/keys.md): every key of one input stream
shares its slot, so one MULTI/EXEC covers them, with the output and dead-letter streams, on
Redis Cluster too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import msgspec

from schemas.events import EventContent, InputMessage, PeriodReopened
from schemas.periods import month_index
from schemas.records import PlayerRecord, PoolState
from service.closeindex import due_members
from service.lists import (
    ACTIVE_DAYS,
    FEDERATION,
    TITLE,
    closed_list_days,
    labels_of,
    pack_card,
    played_day,
    rated_players,
    summary_of,
)
from service.rating import Changes, MemberChanges, MemoryLedger, Needs
from service.rating.partial import Missing, PartialReads
from service.readmodel import (
    event_fields,
    list_key,
    name_members,
    name_words,
    pack_message,
    rank_score,
    unpack_entry,
)
from service.runtime.histories import FROM_KEYS, history_writes, members_from, queue_from
from service.runtime.keys import StreamKeys, glob_escape
from service.runtime.lua import compact_lua
from service.runtime.replies import text
from service.timeline import KEY_LEN, Archived, decode_archived, encode_archived, order_key

_record_decoder = msgspec.json.Decoder(PlayerRecord)
_pool_decoder = msgspec.json.Decoder(PoolState)
_encoder = msgspec.json.Encoder()
DATA_FIELD = "__data__"


async def event_names(client: Any, keys: StreamKeys, fields: Iterable[Any]) -> dict[str, str]:
    """The names of the events among a player's history fields (the lines leave them out,
    D122): `{S}:eventnames`' of them, for readmodel.sorted_entries."""
    async with client.pipeline(transaction=False) as pipe:
        named = queue_event_names(pipe, keys, fields)
        return named(await pipe.execute())


def queue_event_names(
    pipe: Any, keys: StreamKeys, fields: Iterable[Any]
) -> Callable[[list], dict[str, str]]:
    """Queue on `pipe` event_names' read (none without events); returns what makes the names
    from the pipeline's replies, its read the next one."""
    ids = event_fields(fields)
    if ids:
        pipe.hmget(keys.event_names, ids)

    def named(replies: list) -> dict[str, str]:
        if not ids:
            return {}
        found = replies.pop(0)
        return {event_id: text(name) for event_id, name in zip(ids, found) if name is not None}

    return named


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
            pools.update(keys.players(system, pool) for system, pool in want.domain_pools)
        pools.add(keys.players(want.system, want.pool))
        if want.seed_pool is not None:
            pools.add(keys.players(want.system, want.seed_pool))
    return sorted(pools)


class BatchReads(msgspec.Struct, frozen=True):
    """The reads one batch of messages needs, in the order they are queued: whole pools (a
    period's close), some players of pools, the tails of the domains' timelines, the pool
    states and the idempotency markers."""

    whole: list[tuple[str, str]]
    some: list[tuple[tuple[str, str], list[str]]]
    domains: list[str]
    pool_fields: list[str]
    markers: list[str]

    @classmethod
    def of(cls, wants: list[Needs]) -> BatchReads:
        whole = sorted({(w.system, w.pool) for w in wants if w.player_ids is None})
        some: dict[tuple[str, str], set[str]] = {}
        for want in wants:
            if want.player_ids is None:
                continue
            for pool in (want.pool, want.seed_pool):
                if pool is not None and (want.system, pool) not in whole:
                    some.setdefault((want.system, pool), set()).update(want.player_ids)
        # Events: is each in date order? A period's close (player_ids None): when did the
        # pool's last event end? The timeline's tail says both. (A withdrawal, ids (), reads
        # its own.) A withdrawal names no players: HMGET with no field is an error, so skip it.
        return cls(
            whole,
            [(key, sorted(ids)) for key, ids in sorted(some.items()) if ids],
            sorted({w.domain for w in wants if w.player_ids is None or w.player_ids}),
            sorted({f"{w.system}:{w.pool}" for w in wants}),
            sorted({w.marker for w in wants}),
        )

    def queue(self, pipe: Any, keys: StreamKeys) -> None:
        for system, pool in self.whole:
            pipe.hgetall(keys.players(system, pool))
        for (system, pool), ids in self.some:
            pipe.hmget(keys.players(system, pool), ids)
        for domain in self.domains:
            pipe.zrange(keys.timeline(domain), -1, -1)
        pipe.hmget(keys.pools, self.pool_fields)
        pipe.hmget(keys.markers, self.markers)

    def ledger(self, replies: list) -> MemoryLedger:
        """The ledger the batch is applied to, from the replies of `queue`, in order."""
        reply = iter(replies)
        ledger = MemoryLedger()
        for _ in self.whole:
            ledger.load_records(decode_record(raw) for raw in next(reply).values())
        for _ in self.some:
            ledger.load_records(decode_record(raw) for raw in next(reply) if raw is not None)
        for domain in self.domains:
            tail = next(reply)
            if tail:
                ledger.load_timeline(domain, tail)
        for raw in next(reply):
            if raw is not None:
                ledger.load_pool(_pool_decoder.decode(raw))
        for marker, digest in zip(self.markers, next(reply)):
            if digest is not None:
                ledger.markers[marker] = text(digest)
        return ledger


def queue_ledger_reads(
    pipe: Any, keys: StreamKeys, wants: list[Needs]
) -> Callable[[list], MemoryLedger]:
    """Queue on `pipe` the reads of everything a batch of messages needs; returns the
    function that builds, from their replies (in order), the MemoryLedger the batch is then
    applied to (the same code path as the offline `rate`)."""
    if not wants:
        return lambda replies: MemoryLedger()
    reads = BatchReads.of(wants)
    reads.queue(pipe, keys)
    return reads.ledger


async def load_cascade(
    client: Any,
    keys: StreamKeys,
    message: InputMessage,
    want: Needs,
    arrival: int,
    max_cascade: int = 0,
) -> MemoryLedger:
    """Read what re-rating from `message`'s place starts from (inside the commit's WATCH):
    its archive, the domain's timeline from the earliest place it touches, the domain's pool
    states, and the records and histories from there of the event's players: a ledger read
    in part (D65), the rest read as the walk asks for it (`load_missing`). With more later
    events than `max_cascade` (RATING_MAX_CASCADE_EVENTS), only the timeline and the pool
    states: the cascade is refused from them, so a refusal costs no memory (D33). A reopen
    reads what `load_reopen` reads."""
    if isinstance(message, PeriodReopened):
        return await load_reopen(client, keys, message, want)
    async with client.pipeline(transaction=False) as reads:
        reads.hget(keys.events, want.revises or "")
        reads.hget(keys.markers, want.marker)
        archived_raw, marker = await reads.execute()
    archived = decode_archived(archived_raw) if archived_raw is not None and want.revises else None
    ledger = MemoryLedger(markers={want.marker: text(marker)} if marker is not None else None)
    starts = []
    players: set[str] = set()
    if isinstance(message, EventContent):
        kept = int.from_bytes(archived.key[9:], "big") if archived else arrival  # its arrival stays
        starts.append(order_key(message, kept, want.order_prefix))
        players.update(p.id for p in message.players)
    if archived is not None:
        ledger.load_archive(archived)
        players.update(p.id for p in archived.event.players)
        if not archived.withdrawn:
            starts.append(archived.key)
    if not starts:  # withdrawal of an unknown event: apply_message says why
        return ledger
    start = min(starts)
    members = await client.zrange(keys.timeline(want.domain), b"[" + start, b"+", bylex=True)
    ledger.load_timeline(want.domain, members)
    await _load_pools(client, keys, ledger, want.domain_pools)
    if max_cascade and len(members) > max_cascade + 1:  # at most one of them is the event
        return ledger
    ledger.partial = PartialReads(start, want.domain_pools)
    async with client.pipeline(transaction=False) as reads:
        load_players = _queue_players(reads, keys, ledger, sorted(players), start)
        reply = iter(await reads.execute())
    load_players(reply)
    return ledger


async def load_missing(
    client: Any, keys: StreamKeys, ledger: MemoryLedger, missing: Missing
) -> bool:
    """Read what a cascade's walk asked for (D65) into its ledger: the archives, and the
    records and histories of the players. False when nothing new was read (an archive the
    timeline names is not in the store)."""
    partial = ledger.partial
    assert partial is not None
    ids, found = missing.archives, 0
    players = [p for p in missing.players if p not in partial.players]
    if not ids and not players:
        return False
    async with client.pipeline(transaction=False) as reads:  # one round trip (D137)
        for first in range(0, len(ids), 1_000):
            reads.hmget(keys.events, ids[first : first + 1_000])
        load_players = _queue_players(reads, keys, ledger, players, missing.at or partial.start)
        reply = iter(await reads.execute())
    for _ in range(0, len(ids), 1_000):
        for raw in next(reply):
            if raw is not None:
                ledger.load_archive(decode_archived(raw))
                found += 1
    load_players(reply)
    return bool(found or players)


async def load_reopen(
    client: Any, keys: StreamKeys, message: PeriodReopened, want: Needs
) -> MemoryLedger:
    """What undoing a close reads (service/rating/periods.py): the pool's records, each
    player's history members at the list's key (the records the close replaced), the pool
    state, the close's marker and the tail of the domain's timeline."""
    system, pool = want.system, want.pool
    at = list_key(message.period)
    upper = (month_index(message.period) + 1).to_bytes(3, "big")  # the next period's events
    async with client.pipeline(transaction=False) as reads:
        reads.hgetall(keys.players(system, pool))
        reads.hget(keys.pools, f"{system}:{pool}")
        reads.hget(keys.markers, want.marker)
        reads.zrange(keys.timeline(want.domain), -1, -1)
        raw_records, raw_pool, marker, tail = await reads.execute()
    ledger = MemoryLedger(markers={want.marker: text(marker)} if marker is not None else None)
    ledger.load_records(decode_record(raw) for raw in raw_records.values())
    if raw_pool is not None:
        ledger.load_pool(_pool_decoder.decode(raw_pool))
    if tail:
        ledger.load_timeline(want.domain, tail)
    ids = sorted(text(pid) for pid in raw_records)
    for first in range(0, len(ids), FROM_KEYS):
        chunk = ids[first : first + FROM_KEYS]
        async with client.pipeline(transaction=False) as reads:
            queue_from(reads, [keys.history(system, pool, pid) for pid in chunk], at)
            histories = members_from(iter(await reads.execute()), len(chunk))
        for pid, members in zip(chunk, histories):
            members = [m for m in members if m < upper]  # the close's, not a later period's
            if members:
                ledger.load_history((system, pool, pid), members)
    return ledger


async def _load_pools(
    client: Any, keys: StreamKeys, ledger: MemoryLedger, pools: Iterable[tuple[str, str]]
) -> None:
    """The pool states of the domain's pools."""
    for raw in await client.hmget(keys.pools, [f"{system}:{pool}" for system, pool in pools]):
        if raw is not None:
            ledger.load_pool(_pool_decoder.decode(raw))


def _queue_players(
    pipe: Any, keys: StreamKeys, ledger: MemoryLedger, players: list[str], at: bytes
) -> Callable[[Iterator[Any]], None]:
    """Queue on `pipe` the reads of the players' records and histories from the order key
    `at` on (the cascade's start, or the step its walk stopped at: it never looks back, D137),
    in each pool of the domain (PartialReads); returns what loads them into the ledger from
    the replies (in order, after those queued before)."""
    partial = ledger.partial
    assert partial is not None
    if not players:
        return lambda reply: None
    for system, pool in partial.pools:
        pipe.hmget(keys.players(system, pool), players)
        queue_from(pipe, [keys.history(system, pool, pid) for pid in players], at)  # D121

    def load(reply: Iterator[Any]) -> None:
        assert partial is not None
        for system, pool in partial.pools:
            ledger.load_records(decode_record(raw) for raw in next(reply) if raw is not None)
            for pid, history in zip(players, members_from(reply, len(players))):
                if history:
                    ledger.load_history((system, pool, pid), history)
        partial.loaded(players, ledger.histories)

    return load


# ------------------------------------------------------------------ writes

Command = tuple[Any, ...]  # one Redis command: its name, then its arguments

# Fields, members or keys per write command: above the largest commit's (RATING_COMMIT_PLAYERS
# 4,096 players, or one event of up to RATING_MAX_PLAYERS 5,000 alone), so a commit writes one
# command per key and kind; a replay's whole state goes in several, none of tens of MB.
WRITE_CHUNK = 8_192
# History lines per _HSET_EACH script (a key and two arguments each): at most 20,000 arguments
# a command, which hiredis packs (service/runtime/packing.py LARGE_COMMAND; redis-py's own
# packing of a cascade's two commands of 24,000 took 24 ms of the 33 ms of packing them all).
LINES_PER_SCRIPT = 6_000
# Events' messages per HSET of {S}:results: a commit's (64 entries) in one; a correction's
# cascade (hundreds of revisions of tens of kB) in several.
RESULTS_PER_HSET = 64


def _chunks(items: list, size: int) -> Iterator[list]:
    for first in range(0, len(items), size):
        yield items[first : first + size]


def queue(pipe: Any, commands: Iterable[Command]) -> None:
    """Queue the commands on a pipeline (inside MULTI for a commit)."""
    for command in commands:
        pipe.execute_command(*command)


def ledger_writes(
    keys: StreamKeys,
    changes: Changes,
    stamp: int | None = None,
    staged: bool = False,
    packed: Callable[[Any], bytes] = pack_message,
    archived: Callable[[Archived], bytes] = encode_archived,
) -> Iterator[Command]:
    """The Redis writes of a ledger's change set (MemoryLedger.changes after a commit, or
    `whole_state()` for a replay): records, pool states, markers, the archive, timelines and
    histories, and the read model (`stamp`: the time, in ms, of the last input entry, kept as
    the pools' last update; `staged`: a page of a paged close, whose list's changes go to the
    staged key, D60; `packed`, `archived`: how the results' messages and the archived events
    are packed, pack_message and encode_archived or their bytes packed ahead, D136). The one
    place a ledger becomes Redis writes."""
    by_key: dict[str, list[Any]] = {}
    for (system, pool, pid), record in changes.records.items():
        by_key.setdefault(keys.players(system, pool), []).extend((pid, encode(record)))
    for key, fields in by_key.items():
        yield from _hset(key, fields)
    pools = [x for (s, p), v in changes.pools.items() for x in (f"{s}:{p}", encode(v))]
    yield from _hset(keys.pools, pools)
    yield from _hset(keys.markers, [x for pair in changes.markers.items() for x in pair])
    events = [x for e, a in changes.archives.items() for x in (e, archived(a))]
    yield from _hset(keys.events, events)
    for domain, members in changes.timelines.items():
        yield from _member_changes(keys.timeline(domain), members)
    yield from history_writes(keys, changes)  # D121
    yield from read_model_writes(keys, changes, stamp, staged, packed)


def _hset(key: str, fields: list[Any], per: int = WRITE_CHUNK) -> Iterator[Command]:
    """HSET key field value ... (`fields` alternates them), `per` fields a command."""
    for chunk in _chunks(fields, 2 * per):
        yield ("HSET", key, *chunk)


# The results of a commit (D101), the event messages in the order they were published: each
# event's last message replaced; a revision's message is also kept in the revisions hash under
# `<event id>/<revision>`, and the message it replaces in `results` under `<event id>/<revision
# - 1>` unless that is kept already (the first result, or a revision published before the hash
# was kept). Two revisions of one event in one commit pass through `results` in turn, so each
# is kept (ARGV: event id, packed message, its revision or "" for a first result, ...).
_KEEP_RESULTS = compact_lua("""
for i = 1, #ARGV, 3 do
  local e, new, revision = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  if revision then
    local old = redis.call('HGET', KEYS[1], e)
    if old and old ~= new then
      redis.call('HSETNX', KEYS[2], e .. '/' .. (revision - 1), old)
    end
    redis.call('HSET', KEYS[2], e .. '/' .. revision, new)
  end
  redis.call('HSET', KEYS[1], e, new)
end
return #ARGV / 3
""")


def revision_field(event_id: str, revision: int) -> str:
    """The revisions hash's field of an event's message of `revision` (0: its first)."""
    return f"{event_id}/{revision}"


def result_writes(
    keys: StreamKeys, changes: Changes, packed: Callable[[Any], bytes] = pack_message
) -> Iterator[Command]:
    """The events' last messages (`{S}:results`) and each revision's kept (`{S}:revisions`,
    with the message it replaced: D101), by one script a RESULTS_PER_HSET messages: every
    message the commit published, in order, then any last message not among them (a
    replay's whole state). `packed`: pack_message, or what gives its bytes packed ahead
    (service/runtime/packahead.py, D136)."""
    args: list[Any] = []
    seen = set()
    for message in changes.published:
        seen.add(id(message))
        args += (message.event_id, packed(message), message.revision or "")
    for event_id, message in changes.results.items():
        if id(message) not in seen:
            args += (event_id, packed(message), message.revision or "")
    for chunk in _chunks(args, 3 * RESULTS_PER_HSET):
        yield ("EVAL", _KEEP_RESULTS, 2, keys.results, keys.revisions, *chunk)


def _member_changes(key: str, changes: MemberChanges) -> Iterator[Command]:
    if changes.removed:
        yield ("ZREM", key, *changes.removed)
    for chunk in _chunks(list(changes.added), WRITE_CHUNK):
        yield ("ZADD", key, *(x for member in chunk for x in (0, member)))


def queue_ledger_writes(
    pipe: Any,
    keys: StreamKeys,
    ledger: MemoryLedger,
    stamp: int | None = None,
    staged: bool = False,
) -> None:
    """Queue, inside MULTI, what the batch changed (ledger_writes)."""
    queue(pipe, ledger_writes(keys, ledger.changes, stamp, staged))


def read_model_writes(
    keys: StreamKeys,
    changes: Changes,
    stamp: int | None,
    staged: bool = False,
    packed: Callable[[Any], bytes] = pack_message,
) -> Iterator[Command]:
    """The read model's writes of a change set (service/readmodel.py): the events' last
    messages, the players' history lines, the pools' rankings and name indexes, the last
    updates."""
    yield from result_writes(keys, changes, packed)
    yield from _hset(keys.event_names, [x for pair in changes.names.items() for x in pair])  # D122
    lines: list[tuple[str, Any, Any]] = []
    for (system, pool, pid), fields in changes.entries.items():
        key = keys.entries(system, pool, pid)
        gone = [f for f, v in fields.items() if v is None]
        if gone:
            yield ("HDEL", key, *gone)
        lines.extend((key, f, v) for f, v in fields.items() if v is not None)
    for chunk in _chunks(lines, LINES_PER_SCRIPT):
        args = [x for _, f, v in chunk for x in (f, v)]
        yield ("EVAL", _HSET_EACH, len(chunk), *(k for k, _, _ in chunk), *args)
    yield from index_writes(
        keys, ((changes.previous_records.get(who), r) for who, r in changes.records.items())
    )
    yield from list_writes(keys, changes, staged)
    if stamp is not None:
        pools = {(s, p) for s, p, _ in changes.records} | {(s, p) for s, p, _ in changes.entries}
        pools |= {(m.system, m.pool) for m in changes.results.values()}
        if pools:
            yield (
                "HSET",
                keys.catalog,
                *(x for s, p in sorted(pools) for x in (f"{s}:{p}", stamp)),
            )


def index_writes(
    keys: StreamKeys, changes: Iterable[tuple[PlayerRecord | None, PlayerRecord]]
) -> Iterator[Command]:
    """Keep the rankings and name indexes of the records that changed (old, new): one ZADD
    per pool, and per name index one ZREM of the words gone and one ZADD of the new (in
    chunks of WRITE_CHUNK), each ZADD's members in the sorted set's order (D131: Redis
    inserts neighbours into its skiplist at a fraction of the cache misses)."""
    ranked: dict[tuple[str, str], dict[str, int]] = {}  # the pools' rankings
    rescored: dict[tuple[str, str], dict[str, int]] = {}  # the active rankings' (XX)
    labelled: dict[tuple[str, str, str, str], dict[str, int]] = {}  # D47: a ranking per label
    leaving: dict[tuple[str, str, str, str], list[str]] = {}  # label rankings a player leaves
    labels: dict[tuple[str, str], set[str]] = {}  # the pools' labels (`<kind>:<label>`)
    changes = list(changes)
    yield from due_writes(keys, changes)
    _new_indexes([new for old, new in changes if old is None], ranked, labelled, labels)
    for old, new in changes:
        if old is None:
            continue
        system, pool, pid = new.system, new.pool, new.id
        score = rank_score(new)
        moved = rank_score(old) != score
        if moved:
            ranked.setdefault((system, pool), {})[pid] = score
            rescored.setdefault((system, pool), {})[pid] = score
        had, has = labels_of(old), labels_of(new)
        for kind, label in has if moved else has - had:
            labelled.setdefault((system, pool, kind, label), {})[pid] = score
        for kind, label in had - has:
            leaving.setdefault((system, pool, kind, label), []).append(pid)
        if has - had:
            known = labels.setdefault((system, pool), set())
            known.update(f"{kind}:{label}" for kind, label in has - had)
    for labelled_in, members in leaving.items():
        yield ("ZREM", keys.label(*labelled_in), *members)
    for where, fields in labels.items():
        yield ("HSET", keys.labels(*where), *(x for f in sorted(fields) for x in (f, 1)))
    rankings = [(keys.ranking(*where), (), mapping) for where, mapping in ranked.items()]
    by_label = [(keys.label(*where), (), mapping) for where, mapping in sorted(labelled.items())]
    active = [(keys.active(*where), ("XX",), mapping) for where, mapping in rescored.items()]
    for key, flags, mapping in rankings + by_label + active:
        members = sorted(mapping)  # in the sorted set's order (D131): by score, then member
        members.sort(key=mapping.__getitem__)
        scores = list(map(mapping.__getitem__, members))
        for first in range(0, len(members), WRITE_CHUNK):
            yield ("ZADD", key, *flags, *_pairs(scores, members, first, WRITE_CHUNK))
    yield from _name_writes(keys, changes)


def _new_indexes(
    news: list[PlayerRecord],
    ranked: dict[tuple[str, str], dict[str, int]],
    labelled: dict[tuple[str, str, str, str], dict[str, int]],
    labels: dict[tuple[str, str], set[str]],
) -> None:
    """New records (most of an import, D111, D132) into the rankings and label rankings
    (labels_of's labels) they are in, and their pools' labels; by pool, as an import's
    chunk is mostly of one."""
    newly: dict[tuple[str, str], dict[tuple[str, str], dict[str, int]]] = {}
    where: tuple[str, str] | None = None
    for new in news:
        if where != (new.system, new.pool):
            where = (new.system, new.pool)
            pool_ranked = ranked.setdefault(where, {})
            pool_labelled = newly.setdefault(where, {})
        pid, score = new.id, rank_score(new)
        pool_ranked[pid] = score
        if new.federation:
            pool_labelled.setdefault((FEDERATION, new.federation), {})[pid] = score
        for title in new.titles:
            pool_labelled.setdefault((TITLE, title), {})[pid] = score
    for (system, pool), by_label in newly.items():
        for (kind, label), mapping in by_label.items():
            labelled.setdefault((system, pool, kind, label), {}).update(mapping)
        if by_label:
            labels.setdefault((system, pool), set()).update(f"{k}:{v}" for k, v in by_label)


def _pairs(scores: list[Any], members: list[Any], first: int, size: int) -> list[Any]:
    """ZADD's arguments `score member ...` of the members first..first+size (by slices:
    a 1M-player import has 4M of them)."""
    scores, members = scores[first : first + size], members[first : first + size]
    pairs: list[Any] = [None] * (2 * len(members))
    pairs[::2], pairs[1::2] = scores, members
    return pairs


def _name_writes(
    keys: StreamKeys, changes: list[tuple[PlayerRecord | None, PlayerRecord]]
) -> Iterator[Command]:
    """The name indexes' words gone (ZREM) and new (ZADD), per index in chunks: a member
    names its player (word\0id), so no member is both."""
    gone: dict[str, list[bytes]] = {}
    fresh: dict[str, list[bytes]] = {}
    where: tuple[str, str] | None = None
    for old, new in changes:
        if old is None:
            if new.name:  # name_members: sorted, each once
                if where != (new.system, new.pool):  # an import's chunk: one pool, mostly
                    where = (new.system, new.pool)
                    members = fresh.setdefault(keys.names(*where), [])
                pid = new.id
                members += [f"{word}\0{pid}".encode() for word in name_words(new.name)]
        elif old.name != new.name:
            names = keys.names(new.system, new.pool)
            was = set(name_members(old)) if old is not None else set()
            now = set(name_members(new))
            if was - now:
                gone.setdefault(names, []).extend(sorted(was - now))
            if now - was:
                fresh.setdefault(names, []).extend(sorted(now - was))
    for key, members in gone.items():
        for part in _chunks(members, WRITE_CHUNK):
            yield ("ZREM", key, *part)
    for key, members in fresh.items():
        members.sort()  # in the index's order (score 0: by member; D131)
        for part in _chunks(members, WRITE_CHUNK):
            yield ("ZADD", key, *_pairs([0] * len(part), part, 0, len(part)))


def due_writes(
    keys: StreamKeys, changes: Iterable[tuple[PlayerRecord | None, PlayerRecord]]
) -> Iterator[Command]:
    """Keep the close index (D60, service/closeindex.py) of the records that changed (old,
    new): a ZREM and a ZADD per pool with periods whose members moved."""
    due: dict[str, tuple[set[bytes], set[bytes]]] = {}  # key -> (removed, added)
    for old, new in changes:
        after = due_members(new)
        before = due_members(old) if old is not None else set()
        if before != after:
            gone, come = due.setdefault(keys.due(new.system, new.pool), (set(), set()))
            gone.update(before - after)
            come.update(after - before)
    for key, (gone, come) in sorted(due.items()):
        for chunk in _chunks(sorted(gone - come), WRITE_CHUNK):
            yield ("ZREM", key, *chunk)
        for chunk in _chunks(sorted(come), WRITE_CHUNK):
            yield ("ZADD", key, *(x for member in chunk for x in (0, member)))


def queue_indexes(
    pipe: Any, keys: StreamKeys, changes: Iterable[tuple[PlayerRecord | None, PlayerRecord]]
) -> None:
    """Queue the index writes of records written outside a commit (an import, a back-fill)."""
    queue(pipe, index_writes(keys, changes))


def list_writes(keys: StreamKeys, changes: Changes, staged: bool = False) -> Iterator[Command]:
    """The lists' indexes of a change set (service/lists.py, D46-D49), after the rankings:
    the events by date and their summaries, each player's last rated game (a new event's
    players by ZADD GT; a revised or dropped line's player recomputed from their history
    lines), the latest list's changes (a FIDE close), and each touched pool's active ranking
    and list date."""
    pools: dict[tuple[str, str], set[str]] = {}  # pool -> players whose activity may change
    recount: dict[tuple[str, str], set[str]] = {}  # pool -> players to recompute
    rerated: dict[tuple[str, str], list[tuple[str, int, bool]]] = {}  # D67
    yield from _event_writes(keys, changes, pools, recount, rerated)
    yield from _moves_writes(keys, changes, recount, staged)
    for where, ids in recount.items():
        yield from recount_played(keys, *where, sorted(ids))
        pools.setdefault(where, set()).update(ids)
    for where, lines in rerated.items():
        yield from rerated_played(keys, *where, lines)
        pools.setdefault(where, set()).update(pid for pid, _, _ in lines)
    for system, pool, pid in changes.records:
        pools.setdefault((system, pool), set()).add(pid)
    for where in changes.pools:
        pools.setdefault(where, set())
    for (system, pool), ids in sorted(pools.items()):
        state = changes.pools.get((system, pool))
        closed = "-"
        if state is not None:
            closed = "0 0"
            if state.closed_through is not None:
                closed = "{} {}".format(*closed_list_days(state.closed_through))
        yield from active_writes(keys, system, pool, closed, sorted(ids))


def _event_writes(
    keys: StreamKeys,
    changes: Changes,
    pools: dict[tuple[str, str], set[str]],
    recount: dict[tuple[str, str], set[str]],
    rerated: dict[tuple[str, str], list[tuple[str, int, bool]]],
) -> Iterator[Command]:
    """The events' places by date and summaries (D48), and their players' last rated game:
    a new event's by ZADD GT (into `pools`); the revision of a changed event recomputed (into
    `recount`); the revision of an event re-rated for another's change, whose dates and players
    are its own still, from its day and whether each player has rated games in it (into
    `rerated`, D67)."""
    for event_id, message in changes.results.items():
        if message.event_id is None or message.kind == "list":
            continue
        where = (message.system, message.pool)
        if message.withdrawn:
            yield ("ZREM", keys.dated(*where), event_id)
            yield ("HDEL", keys.cards(*where), event_id)
        else:
            yield ("ZADD", keys.dated(*where), played_day(message), event_id)
            yield ("HSET", keys.cards(*where), event_id, pack_card(summary_of(message)))
        if message.kind == "revision":
            cause = message.cause
            if cause is not None and cause.event_id != event_id and not message.withdrawn:
                day = played_day(message)
                rerated.setdefault(where, []).extend(
                    (p.id, day, p.event_games > 0) for p in message.players
                )
            else:
                recount.setdefault(where, set()).update(p.id for p in message.players)
            continue
        ids = rated_players(message)
        if ids and played_day(message):
            day = played_day(message)
            yield ("ZADD", keys.played(*where), "GT", *(x for pid in ids for x in (day, pid)))
            pools.setdefault(where, set()).update(ids)


def _moves_writes(
    keys: StreamKeys,
    changes: Changes,
    recount: dict[tuple[str, str], set[str]],
    staged: bool = False,
) -> Iterator[Command]:
    """A FIDE close's changes (D49: its list lines replace the pool's `moves`; a reopen's
    removed lines empty it); a removed event line's player into `recount`. `staged`: a page
    of a paged close adds its lines to the staged changes, which its last commit renames to
    `moves` (D60)."""
    moves: dict[tuple[str, str], dict[str, int] | None] = {}  # None: the list withdrawn
    for (system, pool, pid), fields in changes.entries.items():
        for field, value in fields.items():
            if not field.startswith("list/"):
                if value is None:
                    recount.setdefault((system, pool), set()).add(pid)
            elif value is None:
                moves[(system, pool)] = None
            elif moves.setdefault((system, pool), {}) is not None:
                change = unpack_entry(value).change
                if change:
                    moves[(system, pool)][pid] = change  # type: ignore[index]  # not None here
    for where, found in moves.items():
        key = keys.nextmoves(*where) if staged else keys.moves(*where)
        if not staged:
            yield ("DEL", key)
        for chunk in _chunks(sorted((found or {}).items()), WRITE_CHUNK):
            yield ("ZADD", key, *(x for pid, change in chunk for x in (change, pid)))


def recount_played(keys: StreamKeys, system: str, pool: str, ids: list[str]) -> Iterator[Command]:
    """Each player's last rated game again from their history lines (a revision or a
    withdrawal may have moved or removed it)."""
    for chunk in _chunks(ids, 1_000):
        entries = [keys.entries(system, pool, pid) for pid in chunk]
        yield ("EVAL", _PLAYED, 1 + len(chunk), keys.played(system, pool), *entries, *chunk)


def rerated_played(
    keys: StreamKeys, system: str, pool: str, lines: list[tuple[str, int, bool]]
) -> Iterator[Command]:
    """The last rated game of the players of events re-rated for another's change (player,
    the event's day, rated games in it or not; D67): a day with rated games can only move it
    up (ZADD GT); a day without can only take it away, and only when it was that day: then it
    is recomputed from the player's history lines, as recount_played does."""
    for chunk in _chunks(lines, 1_000):
        entries = [keys.entries(system, pool, pid) for pid, _, _ in chunk]
        args = [x for pid, day, games in chunk for x in (pid, day, 1 if games else 0)]
        yield ("EVAL", _PLAYED_REVISED, 1 + len(chunk), keys.played(system, pool), *entries, *args)


def active_writes(
    keys: StreamKeys, system: str, pool: str, closed: str, ids: list[str]
) -> Iterator[Command]:
    """The pool's active ranking and list date (D46) after its players `ids` changed;
    `closed`: "<day> <first active day>" of a FIDE close, "0 0" for none, "-" unchanged."""
    pool_keys = (
        keys.listdate(system, pool),
        keys.played(system, pool),
        keys.active(system, pool),
        keys.ranking(system, pool),
        keys.dated(system, pool),
    )
    for n, chunk in enumerate(_chunks(ids, WRITE_CHUNK) if ids else iter([[]])):
        yield ("EVAL", _ACTIVE, len(pool_keys), *pool_keys, closed if n == 0 else "-", *chunk)


# The last day each player (ARGV[i]) played a rated game in the pool: the largest end day
# (bytes 4-6 of the line's order key; 0xffffff: a FIDE list) of their history lines (KEYS[i+1])
# whose event_games (the 14th field of the packed HistoryEntry) is not 0; into KEYS[1].
_RECOUNT = """
local function recount(lines, played, id)
  local last = 0
  for _, value in ipairs(redis.call('HVALS', lines)) do
    local a, b, c = string.byte(value, 4, 6)
    local day = (a * 256 + b) * 256 + c
    if day ~= 16777215 and day > last then
      local games
      if string.byte(value, KEY_LEN + 1) == 193 then  -- LINE_TAG (D102): event games 13th
        games = cmsgpack.unpack(string.sub(value, KEY_LEN + 2))[13]
      else games = cmsgpack.unpack(string.sub(value, KEY_LEN + 1))[14] end
      if (tonumber(games) or 0) > 0 then last = day end
    end
  end
  if last > 0 then redis.call('ZADD', played, last, id)
  else redis.call('ZREM', played, id) end
end
""".replace("KEY_LEN", str(KEY_LEN))
_PLAYED = compact_lua(
    _RECOUNT
    + """
for i = 2, #KEYS do recount(KEYS[i], KEYS[1], ARGV[i - 1]) end
return #KEYS - 1
"""
)
# rerated_played (D67): for each player ARGV[3i-2] of an event re-rated for another's change,
# the event's day ARGV[3i-1] and whether they have rated games in it (ARGV[3i], "1" / "0"):
# with, their last rated game (KEYS[1]) is that day if later (ZADD GT, of a run of such
# players in one call: it takes each pair in turn); without, it is recounted from their history
# lines (KEYS[i+1]) only when it was that day.
_PLAYED_REVISED = compact_lua(
    _RECOUNT
    + """
local raise = {}  -- the pairs of ZADD GT since the last recount check: one call, in order
local function flush()
  for at = 1, #raise, 2000 do
    redis.call('ZADD', KEYS[1], 'GT', unpack(raise, at, math.min(at + 1999, #raise)))
  end
  raise = {}
end
for i = 2, #KEYS do
  local id, day = ARGV[3 * i - 5], ARGV[3 * i - 4]
  if ARGV[3 * i - 3] == '1' then raise[#raise + 1] = day; raise[#raise + 1] = id
  else
    flush()
    local at = redis.call('ZSCORE', KEYS[1], id)
    if at and tonumber(at) == tonumber(day) then recount(KEYS[i], KEYS[1], id) end
  end
end
flush()
return #KEYS - 1
"""
)
# The active ranking (KEYS[3]) and list date (KEYS[1]: "ref first closed closed_first") of a
# pool: the list's day is the FIDE close's (ARGV[1] "<day> <first>", "0 0" none, "-" the
# stored one), else the latest event's end day (KEYS[5]); the active players are those whose
# last rated game (KEYS[2]) is on the first active day or later, with their ranking (KEYS[4])
# scores. When the first active day moves, the players between the two days go or come; the
# players ARGV[2..] are looked at again; with no list date yet, the whole set is built. The
# players go in and out of the active ranking a thousand a call (ZMSCORE, ZADD and ZREM of
# many, where a call each took three; D143).
_ACTIVE = compact_lua(
    """
local state = redis.call('GET', KEYS[1])
local first, closed, closed_first = nil, 0, 0
if state then
  local _, f, c, cf = string.match(state, '(%d+) (%d+) (%d+) (%d+)')
  first, closed, closed_first = tonumber(f), tonumber(c), tonumber(cf)
end
if ARGV[1] ~= '-' then
  local c, cf = string.match(ARGV[1], '(%d+) (%d+)')
  closed, closed_first = tonumber(c), tonumber(cf)
end
local ref, new_first = closed, closed_first
if closed == 0 then
  local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
  ref = last[2] and tonumber(last[2]) or 0
  new_first = ref > 0 and ref - ACTIVE_DAYS + 1 or 0
end
local function each(ids, from, f)
  for at = from, #ids, 1000 do f({unpack(ids, at, math.min(at + 999, #ids))}) end
end
local function put(ids)
  each(ids, 1, function(s)
    local scores, args = redis.call('ZMSCORE', KEYS[4], unpack(s)), {}
    for j, id in ipairs(s) do
      if scores[j] then args[#args + 1] = scores[j]; args[#args + 1] = id end
    end
    if #args > 0 then redis.call('ZADD', KEYS[3], unpack(args)) end
  end)
end
local function drop(ids) each(ids, 1, function(s) redis.call('ZREM', KEYS[3], unpack(s)) end) end
if first == nil then
  redis.call('DEL', KEYS[3])
  if ref > 0 then put(redis.call('ZRANGEBYSCORE', KEYS[2], new_first, '+inf')) end
elseif new_first > first then
  drop(redis.call('ZRANGEBYSCORE', KEYS[2], first, '(' .. new_first))
elseif new_first < first then
  put(redis.call('ZRANGEBYSCORE', KEYS[2], new_first, '(' .. first))
end
local active, gone = {}, {}
each(ARGV, 2, function(s)
  local days = redis.call('ZMSCORE', KEYS[2], unpack(s))
  for j, id in ipairs(s) do
    if ref > 0 and days[j] and tonumber(days[j]) >= new_first then active[#active + 1] = id
    else gone[#gone + 1] = id end
  end
end)
put(active)
drop(gone)
redis.call('SET', KEYS[1], string.format('%d %d %d %d', ref, new_first, closed, closed_first))
return ref
""".replace("ACTIVE_DAYS", str(ACTIVE_DAYS))
)


# HSET KEYS[i] ARGV[2i-1] ARGV[2i] for every i (one command for a commit's history lines).
_HSET_EACH = compact_lua(
    "for i = 1, #KEYS do redis.call('HSET', KEYS[i], ARGV[2*i-1], ARGV[2*i]) end return #KEYS"
)


def xadd(client: Any, stream: str, data: bytes) -> Any:
    """Append one message as plain JSON in `__data__` (the wire contract, docs/reference/contract.md)."""
    return client.xadd(stream, {DATA_FIELD: data})


async def scan_store(client: Any, keys: StreamKeys) -> AsyncIterator[tuple[str, str]]:
    """Every key of a stream's store (SCAN MATCH its prefix), with its kind: the part of the
    name after the prefix up to the next ":" (keys.py; migrate.py moves a store by it, backup.py
    copies one)."""
    async for raw in client.scan_iter(match=glob_escape(keys.prefix) + "*", count=1_000):
        key = text(raw)
        yield key, key[len(keys.prefix) :].split(":", 1)[0]


async def live_pools(client: Any, keys: StreamKeys) -> list[tuple[str, str]]:
    """The (system, pool) pairs that have a players hash under `keys`."""
    prefix = keys.players("", "")[:-1]  # "...:players:"
    pools = set()
    async for key in client.scan_iter(match=glob_escape(prefix) + "*", count=1_000):
        system, _, pool = text(key)[len(prefix) :].partition(":")
        pools.add((system, pool))
    return sorted(pools)


# ---------------------------------------------------------------------------- dead letters
# What is done with them: service/runtime/deadletters.py.
