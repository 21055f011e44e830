"""Writing stores' identity records (storeid.py): `rating-service init-store` on a new
deployment, `rating-service upgrade-store` on a store of an earlier format
(docs/operations/upgrades.md; decisions D16, D19). upgrade-store also refolds the name
indexes of the stores it keeps or upgrades (refold.py, D50). Each plan is read first and shown; the
writes are SET NX (a record someone wrote meanwhile is not overwritten) or a swap of the
record read (storeid.swap).
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.runtime.histories import convert, sorted_set_histories
from service.runtime.keys import StreamKeys
from service.runtime.metrics import version
from service.runtime.partitions import Layout, advertise
from service.runtime.refold import Refold, apply_refold, plan_refold
from service.runtime.store import glob_escape, text
from service.runtime.storeid import (
    BEFORE_FORMATS,
    FORMAT,
    Probe,
    StoreRecord,
    StoreRefused,
    absent,
    decode,
    describe,
    encode,
    mismatch,
    now_utc,
    probe_layout,
    record_for,
    sibling_of,
    sibling_probes,
    swap,
)


class Step(msgspec.Struct):
    """What a plan does with one store: `write` a record (keys, none), `create` one (an empty
    store beside others), `mark` the other layout's store migrated, `keep` it (current),
    `refold` a pool's name index (D50), `raise` an older format's record to this one's (D104),
    `histories`: make a store's sorted-set histories one string each (D121), before its raise."""

    stream: str
    key: str
    action: str
    record: StoreRecord | None = None
    found: bytes | None = None  # the record read (a `mark` swaps it)
    said: str = ""  # what the store is, for a person
    refold: Refold | None = None  # a `refold`'s members to swap
    histories: list[str] = []  # a `histories` step's keys


# The record replaced only if it is still the one the plan read (a compare-and-set).
_SWAP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2]) end
return false
"""


def summary(record: StoreRecord) -> str:
    return (
        f"store format {record.format}, partition {record.partition} of the {record.layout} layout"
    )


async def plan_init(client: Any, layout: Layout) -> list[Step]:
    """The records of a new deployment's stores; StoreRefused listing what is there when a
    store of the layout, or of the other layout of the same names, has a record or keys."""
    probes = await probe_layout(client, layout)
    there = [p for p in probes if not p.empty]
    there += [p for p in await sibling_probes(client, sibling_of(layout)) if not p.empty]
    if there:
        lines = [f"  {p.stream}: {describe(p)}" for p in there]
        raise StoreRefused(
            "stores are there already, nothing written (a store with keys but no record takes "
            "`rating-service upgrade-store`):\n" + "\n".join(lines)
        )
    return [
        Step(p.stream, p.key, "create", record_for(layout, partition))
        for partition, p in zip(layout.partitions, probes)
    ]


async def apply_init(client: Any, layout: Layout, steps: list[Step]) -> None:
    for step in steps:
        assert step.record is not None
        if not await client.set(step.key, encode(step.record), nx=True):
            raise StoreRefused(f"{step.stream}: a store record was written meanwhile; nothing more")
    await advertise(client, layout)


async def plan_upgrade(client: Any, layout: Layout, url: str) -> list[Step]:
    """What upgrade-store does with each store of the layout (and a store of the other layout
    of the same names left by a migration before store format 1: marked migrated). Refused:
    a record newer than this version, one that disagrees with the layout, nothing to upgrade."""
    probes = await probe_layout(client, layout)
    if all(p.empty for p in probes):
        raise StoreRefused("nothing to upgrade: " + absent(url, probes))
    steps = []
    for partition, found in zip(layout.partitions, probes):
        if found.raw is not None:
            record = decode(found.raw, found.stream, older=True)
            said = mismatch(record, layout, partition)
            if said is not None and record.migrated_to is None:
                raise StoreRefused(said)
            if record.format < FORMAT:  # D104: its values are read as they are
                steps += await _plan_histories(client, found)
                raised = msgspec.structs.replace(
                    record, format=FORMAT, upgraded_from=record.format, written_by=version()
                )
                steps.append(
                    Step(
                        found.stream,
                        found.key,
                        "raise",
                        raised,
                        said=describe(found),
                        found=found.raw,
                    )
                )
                continue
            steps.append(Step(found.stream, found.key, "keep", record, said=describe(found)))
        elif found.keys:
            steps += await _plan_histories(client, found)
            record = record_for(layout, partition, upgraded_from=BEFORE_FORMATS)
            steps.append(Step(found.stream, found.key, "write", record, said=describe(found)))
        else:
            steps.append(
                Step(found.stream, found.key, "create", record_for(layout, partition), said="empty")
            )
    steps += await _plan_sibling(client, layout)
    served = [step.stream for step in steps if step.action in ("keep", "write")]
    for plan in await plan_refold(client, served):
        steps.append(Step(plan.stream, plan.key, "refold", refold=plan))
    return steps


async def _plan_histories(client: Any, found: Probe) -> list[Step]:
    """A store of format 2 or earlier keeps each history as a sorted set: made one string
    each (D121) before its record is raised, so no replica of this version meets one."""
    names = await sorted_set_histories(client, StreamKeys(found.stream))
    return [Step(found.stream, found.key, "histories", histories=names)] if names else []


async def _plan_sibling(client: Any, layout: Layout) -> list[Step]:
    """The other layout's stores: under the domains layout, a single store with keys and no
    record is the one a migration before store format 1 copied (marked migrated, so that a
    stale replica refuses it); any other store of the other layout is refused."""
    sibling = sibling_of(layout)
    if sibling is None:
        return []
    steps = []
    for partition, found in zip(sibling.partitions, await sibling_probes(client, sibling)):
        if found.empty:
            continue
        record = decode(found.raw, found.stream) if found.raw is not None else None
        if record is not None and record.migrated_to is not None:
            continue
        if layout.layout != "domains" or record is not None:
            raise StoreRefused(
                f"the {sibling.layout} layout's store of {found.stream} is there too "
                f"({describe(found)}): which layout is live? run upgrade-store with "
                f"RATING_PARTITIONS={sibling.layout} if it is that one"
            )
        marked = msgspec.structs.replace(
            record_for(sibling, partition, upgraded_from=BEFORE_FORMATS),
            migrated_to=layout.layout,
            migrated_at=now_utc(),
        )
        steps.append(Step(found.stream, found.key, "mark", marked, said=describe(found)))
    return steps


async def apply_upgrade(client: Any, layout: Layout, steps: list[Step]) -> None:
    for step in steps:
        if step.refold is not None:
            await apply_refold(client, [step.refold])
        if step.action == "histories":
            await convert(client, step.histories)
        if step.action in ("write", "create", "mark"):
            assert step.record is not None
            if not await client.set(step.key, encode(step.record), nx=True):
                raise StoreRefused(
                    f"{step.stream}: a store record was written meanwhile; run upgrade-store again"
                )
        if step.action == "raise":
            assert step.record is not None and step.found is not None
            if not await client.eval(_SWAP, 1, step.key, step.found, encode(step.record)):
                raise StoreRefused(
                    f"{step.stream}: its store record changed meanwhile; run upgrade-store again"
                )
    await advertise(client, layout)


async def mark_migrated(client: Any, found: Probe, layout: Layout, to: str) -> None:
    """The old store's record after `migrate-partitions` moved it to the `to` layout (its
    record written first if it had none): a replica of the old layout refuses it."""
    if found.raw is not None:
        record = decode(found.raw, found.stream)
        marked = msgspec.structs.replace(record, migrated_to=to, migrated_at=now_utc())
        if not await swap(client, found.key, found.raw, marked):
            raise StoreRefused(f"{found.stream}: its store record changed meanwhile")
        return
    partition = layout.of_stream(found.stream)
    marked = msgspec.structs.replace(
        record_for(layout, partition, upgraded_from=BEFORE_FORMATS),
        migrated_to=to,
        migrated_at=now_utc(),
    )
    await client.set(found.key, encode(marked))


# ---------------------------------------------------------------------------- adopt a namespace
class Adoption(msgspec.Struct):
    """`adopt-namespace`: the live store's keys renamed under `keep_as`, then the
    namespace's renamed to the live names, each store's record saying where it now is."""

    stream: str
    namespace: str
    keep_as: str
    live: list[str]  # the live store's keys (the owner's excepted), moved under keep_as
    adopted: list[str]  # the namespace's keys, made live
    record: StoreRecord  # the namespace's record, as it will be once live


async def _keys_under(client: Any, prefix: str) -> list[str]:
    return sorted([text(k) async for k in client.scan_iter(match=glob_escape(prefix) + "*")])


async def plan_adopt(client: Any, stream: str, namespace: str, keep_as: str) -> Adoption:
    """What making `namespace`'s store of `stream` (a `replay --into`) live moves; refused
    while a replica holds the stream's lease, without a replay's record under the namespace,
    or when `keep_as` has keys already."""
    live, new, kept = (StreamKeys(stream, ns) for ns in (None, namespace, keep_as))
    if await client.exists(live.lease):
        raise StoreRefused(f"a service holds the lease of {stream}: stop every replica first")
    raw = await client.get(new.store)
    if raw is None:
        raise StoreRefused(
            f"namespace {namespace!r} has no store record for {stream} (`rating-service replay "
            f"--stream {stream} --into {namespace}` writes one): nothing moved"
        )
    record = decode(raw, stream)
    if await _keys_under(client, kept.prefix):
        raise StoreRefused(
            f"namespace {keep_as!r} has keys of {stream} already: give another --keep-as; "
            "nothing moved"
        )
    owner = {live.lease, live.lease_fence, live.lease_token, live.replicas}  # stay in place
    moved = [k for k in await _keys_under(client, live.prefix) if k not in owner]
    return Adoption(
        stream,
        namespace,
        keep_as,
        moved,
        await _keys_under(client, new.prefix),
        msgspec.structs.replace(record, namespace=None, written_by=version()),
    )


async def apply_adopt(client: Any, plan: Adoption) -> None:
    """RENAME the live keys under keep_as, then the namespace's to the live names (one slot:
    the hash tag is the stream's either way), and rewrite both records."""
    live, new, kept = (StreamKeys(plan.stream, ns) for ns in (None, plan.namespace, plan.keep_as))
    for key in plan.live:
        await client.rename(key, kept.prefix + key[len(live.prefix) :])
    for key in plan.adopted:
        await client.rename(key, live.prefix + key[len(new.prefix) :])
    await client.set(live.store, encode(plan.record))
    raw = await client.get(kept.store)
    if raw is not None:
        old = decode(raw, plan.stream)
        await client.set(kept.store, encode(msgspec.structs.replace(old, namespace=plan.keep_as)))
