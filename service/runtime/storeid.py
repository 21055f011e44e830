"""A store that knows itself (docs/operations/upgrades.md; decisions D16, D17): one identity
record per input stream's store, `{S}:store` (keys.StreamKeys.store, in the stream's slot), a
msgspec StoreRecord in JSON: the store format (FORMAT), the layout and the partition it belongs
to, its key namespace, when and by which version it was created and last written, and
whether `migrate-partitions` moved it into another layout.

Every replica looks before it serves (check_layout, at start; StoreGate, when it takes a lease
and while it runs):

    record agrees with the settings       served
    record newer than FORMAT              refused: run that version
    record older than FORMAT              refused: run `rating-service upgrade-store`
    record disagrees (migrated, layout, partition, namespace)
                                          refused, naming both sides and the setting to fix
    no record, no keys                    refused: init-store (a new deployment) or the data
                                          did not load (a restore)
    keys, no record                       refused: a store written before format 1, run
                                          `rating-service upgrade-store`

With RATING_CREATE_STORE=true (throwaway setups), and for an embedded server on a data
directory it created itself, a store without record gets one instead, as init-store or
upgrade-store would write it (D16).

"Keys" are the keys every store that ever rated, imported or had a replica has (the applied
cursor, the shared hashes, the lease counter; not the input stream): EXISTS, not SCAN, so that
the service's ACL (docs/operations/security.md) is enough. init-store and upgrade-store (service/cli/stores.py)
write records; migrate.py writes the new partitions' and marks the old one migrated.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import msgspec
from redis.exceptions import NoPermissionError

from service.runtime.keys import StreamKeys, has_hash_tag, untagged
from service.runtime.metrics import version
from service.runtime.partitions import Layout, Partition, layout_of

# The store format this version reads and writes. 2 (D104): results, history states, the
# archive and history lines may be compact (D100, D102), which a version of format 1 cannot
# read; a store of format 1 is read as it is once upgrade-store has raised its record. 3
# (D121): a player's history is one string, not a sorted set; upgrade-store makes the sorted
# sets of a store of format 1 or 2 strings before it raises the record.
FORMAT = 3
BEFORE_FORMATS = 0  # `upgraded_from` of a store written before store formats existed
BACKUPS = "docs/operations/backups.md"


class StoreRefused(Exception):
    """Why a store cannot be served, or written, as it is: one line."""


class StoreRecord(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """The identity record of one input stream's store (`{S}:store`, JSON)."""

    format: int
    layout: str  # single / domains
    partition: str  # the partition's name (single: the input stream's)
    input: str  # the partition's input stream
    domains: tuple[str, ...] | None = None  # the ordering domains it takes (None: any)
    namespace: str | None = None  # a replay's (`replay --into NS`); None: the live keys
    created_at: str  # UTC, ISO 8601
    created_by: str  # the rating-service version that wrote it first
    written_by: str  # the last version that wrote it
    upgraded_from: int | None = None  # the format upgrade-store found (0: before formats)
    migrated_to: str | None = None  # the layout migrate-partitions copied the store into
    migrated_at: str | None = None


class _Head(msgspec.Struct):
    """What any version's record has: enough to refuse a newer one."""

    format: int
    written_by: str = "?"


_decode_head = msgspec.json.Decoder(_Head)
_decode = msgspec.json.Decoder(StoreRecord)


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def record_for(
    layout: Layout,
    partition: Partition,
    namespace: str | None = None,
    *,
    upgraded_from: int | None = None,
) -> StoreRecord:
    """The record of a new store of `partition` (written by this version, now)."""
    at, by = now_utc(), version()
    return StoreRecord(
        format=FORMAT,
        layout=layout.layout,
        partition=partition.name,
        input=partition.input,
        domains=partition.domains,
        namespace=namespace,
        created_at=at,
        created_by=by,
        written_by=by,
        upgraded_from=upgraded_from,
    )


def encode(record: StoreRecord) -> bytes:
    return msgspec.json.encode(record)


def decode(raw: bytes, stream: str, older: bool = False) -> StoreRecord:
    """The record, or StoreRefused when it is newer than this version, older (unless `older`:
    what upgrade-store raises) or cannot be read."""
    try:
        head = _decode_head.decode(raw)
    except msgspec.DecodeError as exc:
        raise StoreRefused(f"the store record of {stream} cannot be read ({exc})") from None
    if head.format > FORMAT:
        raise StoreRefused(
            f"the store of {stream} is store format {head.format}, newer than this version's "
            f"({FORMAT}; rating-service {version()}); it was last written by rating-service "
            f"{head.written_by}: run that version or a later one"
        )
    if head.format < FORMAT and not older:
        raise StoreRefused(
            f"the store of {stream} is store format {head.format}, older than this version's "
            f"({FORMAT}): run `rating-service upgrade-store` (--dry-run shows what it would write)"
        )
    try:
        return _decode.decode(raw)
    except msgspec.ValidationError as exc:
        raise StoreRefused(f"the store record of {stream} cannot be read ({exc})") from None


def _layout_setting(layout: str) -> str:
    return f"RATING_PARTITIONS={layout}"


def mismatch(
    record: StoreRecord, layout: Layout, partition: Partition, namespace: str | None = None
) -> str | None:
    """Why a replica (or command) with `layout` must not serve the store of `partition` that
    `record` describes (None: it may), naming both sides and the setting to fix."""
    where = f"the store of {partition.input}"
    if record.migrated_to is not None:
        when = f" on {record.migrated_at[:10]}" if record.migrated_at else ""
        return (
            f"{where} was migrated to the {record.migrated_to} layout{when} (rating-service "
            f"migrate-partitions); this replica runs {_layout_setting(layout.layout)}: set "
            f"{_layout_setting(record.migrated_to)}"
        )
    if record.namespace != namespace:
        here = "the live keys" if namespace is None else f"namespace {namespace!r}"
        return (
            f"{where}: its record names namespace {record.namespace!r} but lies under {here} "
            "(keys renamed by hand? `rating-service adopt-namespace` makes a replay's store live)"
        )
    if record.layout != layout.layout:
        return (
            f"{where} is partition {record.partition} of the {record.layout} layout; this replica "
            f"runs {_layout_setting(layout.layout)}: set {_layout_setting(record.layout)}"
        )
    if (record.partition, record.domains) != (partition.name, partition.domains):
        return (
            f"{where} is partition {record.partition} (domains {_domains(record.domains)}); this "
            f"version's {record.layout} layout makes it partition {partition.name} (domains "
            f"{_domains(partition.domains)}): run the version that wrote it "
            f"({record.written_by}), or move the store (docs/operations/upgrades.md)"
        )
    return None


def _domains(domains: tuple[str, ...] | None) -> str:
    return "any" if domains is None else " ".join(domains)


# ---------------------------------------------------------------------------- what a store holds
class Probe(msgspec.Struct):
    """One store as found: its record (raw), and whether it has keys."""

    stream: str
    key: str
    raw: bytes | None
    keys: bool

    @property
    def empty(self) -> bool:
        return self.raw is None and not self.keys


def marker_keys(stream: str, namespace: str | None = None) -> list[str]:
    """Keys every store that ever rated, imported or had a replica has one of. Not the input
    stream: a bare stream is what a raw producer, or a consumer group created again after a
    FLUSHALL, leaves (its entries are rated once the store has its record)."""
    k = StreamKeys(stream, namespace)
    return [k.cursor, k.pools, k.markers, k.events, k.catalog, k.results, k.lease_token]


async def probe(client: Any, stream: str, namespace: str | None = None) -> Probe:
    key = StreamKeys(stream, namespace).store
    raw = await client.get(key)
    keys = bool(await client.exists(*marker_keys(stream, namespace)))
    return Probe(stream, key, raw, keys)


async def probe_layout(client: Any, layout: Layout) -> list[Probe]:
    return [await probe(client, p.input) for p in layout.partitions]


def describe(found: Probe) -> str:
    """What a store is, for a person."""
    if found.raw is None:
        return (
            "keys but no store record (a store written before store format 1)"
            if found.keys
            else "empty"
        )
    try:
        record = decode(found.raw, found.stream, older=True)
    except StoreRefused as exc:
        return str(exc)
    said = (
        f"store format {record.format}, partition {record.partition} of the {record.layout} "
        f"layout, created {record.created_at} by rating-service {record.created_by}"
    )
    if record.migrated_to is not None:
        said += f", migrated to the {record.migrated_to} layout {record.migrated_at or ''}".rstrip()
    return said


def sibling_of(layout: Layout) -> Layout | None:
    """The other layout of the same base input stream (a store of it means a wrong
    RATING_PARTITIONS, or a migration not done); None for a base with a hash tag."""
    if has_hash_tag(layout.base):
        return None
    first = layout.partitions[0]
    output, dead = untagged(first.output), untagged(first.dead_letter)
    other = "domains" if layout.layout == "single" else "single"
    return layout_of(other, (layout.base,), output, dead)


def _streams(probes: Sequence[Probe]) -> str:
    first = probes[0].stream
    return first if len(probes) == 1 else f"{first} and {len(probes) - 1} more"


def absent(url: str, probes: Sequence[Probe]) -> str:
    """The line for stores with neither record nor keys (D16)."""
    return (
        f"no store at {url} for input stream {_streams(probes)} (no store record, no keys): a new "
        "deployment? run `rating-service init-store` once (or set RATING_CREATE_STORE=true, for "
        f"throwaway setups); a restore? the data did not load ({BACKUPS})"
    )


def pre_format(url: str, probes: Sequence[Probe]) -> str:
    return (
        f"the store of {_streams(probes)} at {url} was written before store format 1 (it "
        f"has keys but no store record, {probes[0].key}): run `rating-service upgrade-store` "
        "(--dry-run shows what it would write)"
    )


def sibling_line(url: str, layout: Layout, sibling: Layout) -> str:
    if layout.layout == "single":
        return (
            f"no store at {url} for {layout.base} in the single layout, but the domains layout's "
            f"stores of {layout.base} are there: set RATING_PARTITIONS=domains"
        )
    return (
        f"no store at {url} for the domains layout's partitions of {layout.base}, but the single "
        f"layout's store of {layout.base} is there: move it with `rating-service "
        "migrate-partitions` (docs/operations/partitions.md), or unset RATING_PARTITIONS"
    )


async def sibling_probes(client: Any, sibling: Layout | None) -> list[Probe]:
    """The other layout's stores, as far as this user may look (an ACL that allows only its own
    layout's keys, docs/operations/security.md: none)."""
    if sibling is None:
        return []
    try:
        return await probe_layout(client, sibling)
    except NoPermissionError:
        return []


async def _sibling_in_use(client: Any, sibling: Layout | None) -> bool:
    """Whether the other layout has a store here that is not migrated away."""
    for found in await sibling_probes(client, sibling):
        if found.raw is not None:
            try:
                if decode(found.raw, found.stream).migrated_to is None:
                    return True
            except StoreRefused:
                return True
        elif found.keys:
            return True
    return False


async def check_layout(
    client: Any, layout: Layout, url: str, *, create: bool = False
) -> list[StoreRecord]:
    """The records of the layout's stores, each agreeing with `layout`; StoreRefused (one
    line) otherwise. `create` (RATING_CREATE_STORE): a store without record gets one, as
    init-store or upgrade-store would write it (D16)."""
    probes = await probe_layout(client, layout)
    records: list[StoreRecord] = []
    problems: list[str] = []
    for partition, found in zip(layout.partitions, probes):
        if found.raw is None:
            continue
        record = decode(found.raw, found.stream)
        said = mismatch(record, layout, partition)
        if said is not None:
            problems.append(said)
        records.append(record)
    if problems:
        more = f" (and {len(problems) - 1} more stores)" if len(problems) > 1 else ""
        raise StoreRefused(problems[0] + more)
    missing = [p for p in probes if p.raw is None]
    if not missing:
        return records
    sibling = sibling_of(layout)
    if not records and await _sibling_in_use(client, sibling):
        assert sibling is not None
        raise StoreRefused(sibling_line(url, layout, sibling))
    if create:
        for found in missing:
            record = record_for(
                layout,
                layout.of_stream(found.stream),
                upgraded_from=BEFORE_FORMATS if found.keys else None,
            )
            await client.set(found.key, encode(record), nx=True)
            records.append(record)
        return records
    earlier = [p for p in missing if p.keys]
    if earlier:
        raise StoreRefused(pre_format(url, earlier))
    if records:
        raise StoreRefused(
            f"no store record for {_streams(missing)} at {url}, while the layout's other stores "
            "have theirs (a restore that missed it? a version with new partitions?): "
            "`rating-service upgrade-store` creates it (--dry-run shows what it would write)"
        )
    raise StoreRefused(absent(url, missing))


# The record rewritten only while it is still what was read (a migration or an upgrade may
# write it meanwhile). KEYS[1] record; ARGV[1] what was read, ARGV[2] the new one.
SWAP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
"""


async def swap(client: Any, key: str, old: bytes, new: StoreRecord) -> bool:
    return bool(await client.eval(SWAP, 1, key, old, encode(new)))


async def note_writer(client: Any, layout: Layout) -> None:
    """Stamp this version as the last to write each store (`written_by`), where it is not."""
    for partition in layout.partitions:
        key = StreamKeys(partition.input).store
        raw = await client.get(key)
        if raw is None:
            continue
        record = _decode.decode(raw)
        if record.written_by != version():
            await swap(client, key, raw, msgspec.structs.replace(record, written_by=version()))


def replay_record(live: StoreRecord | None, stream: str, namespace: str) -> StoreRecord:
    """The record `replay --into NAMESPACE` writes for the store it builds: the live store's
    identity (its layout and partition) under the namespace, created now; a stream without a
    live record is taken for a single-layout one, or its domains partition by its hash tag."""
    if live is None:
        layout = layout_of("single", (stream,), "ratings.updated", "events.rejected")
        partition = layout.partitions[0]
        if has_hash_tag(stream):
            whole = layout_of("domains", (untagged(stream),), "ratings.updated", "events.rejected")
            if stream in whole.inputs:
                layout, partition = whole, whole.of_stream(stream)
        return record_for(layout, partition, namespace)
    at, by = now_utc(), version()
    return msgspec.structs.replace(
        live,
        namespace=namespace,
        created_at=at,
        created_by=by,
        written_by=by,
        upgraded_from=None,
        migrated_to=None,
        migrated_at=None,
    )
