"""Partitions: the ordering domains' input streams, and where each message goes
(docs/operations/partitions.md "Partitions").

A partition is one input stream with its own applied cursor, store, lease, and output and
dead-letter streams, all under one hash tag (one Redis Cluster slot), so that every commit
is a single-slot MULTI/EXEC. Two layouts (RATING_PARTITIONS):

    single   (default) the input stream(s) of RATING_INPUT_STREAMS, each taking any event,
             writing to RATING_OUTPUT_STREAM and RATING_DEAD_LETTER_STREAM. What a
             deployment with one Redis and a few pools needs; the data of earlier versions.
    domains  one partition per ordering domain (service/engine/domains.py: a pool, or pools
             that read each other such as NASPA's nwl and csw), named after it:

                 {fide.standard}:events.finished     input (RATING_INPUT_STREAMS names the suffix)
                 {fide.standard}:ratings.updated     output (RATING_OUTPUT_STREAM)
                 {fide.standard}:events.rejected     dead letters (RATING_DEAD_LETTER_STREAM)

             An event on another domain's stream is dead-lettered `misrouted`, naming its stream.

The store keys of a stream are prefixed by the stream's name when it carries a hash tag,
else by `{<stream>}` (earlier versions' layout): either way, the stream's slot.
"""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.common import POOLS, SYSTEMS
from service.engine.domains import Domains
from service.engine.registry import default_registry
from service.runtime.keys import in_slot_of, layout_key, untagged

LAYOUTS = ("single", "domains")

# The ordering domains of every engine this version implements (service/engine/domains.py).
DOMAINS: Domains = default_registry().domains


class Partition(msgspec.Struct, frozen=True):
    """One ordering domain's streams (or, in the single layout, every domain's)."""

    name: str  # "fide.standard", "naspa"; in the single layout the input stream's name
    input: str
    output: str
    dead_letter: str
    domains: tuple[str, ...] | None = None  # the ordering domains it takes; None: any

    def takes(self, system: str, pool: str) -> bool:
        return self.domains is None or DOMAINS.of(system, pool) in self.domains


class Layout(msgspec.Struct, frozen=True):
    """A layout's partitions, as the service advertises them (keys.layout_key)."""

    layout: str
    partitions: tuple[Partition, ...]
    base: str = "events.finished"  # RATING_INPUT_STREAMS (its first name): what producers know

    def route(self, system: str, pool: str) -> Partition:
        """The partition an event or close of (system, pool) must be appended to (in the single
        layout with several input streams: the first)."""
        for partition in self.partitions:
            if partition.takes(system, pool):
                return partition
        raise KeyError(f"no partition takes {system}/{pool}")

    def of_stream(self, stream: str) -> Partition:
        for partition in self.partitions:
            if partition.input == stream:
                return partition
        raise KeyError(f"{stream} is not an input stream of the {self.layout} layout")

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(p.input for p in self.partitions)


def domain_names() -> list[str]:
    """Every ordering domain, in a fixed order (systems, then pools as schemas.common lists them)."""
    names: list[str] = []
    for system in SYSTEMS:
        for pool in POOLS[system]:
            domain = DOMAINS.of(system, pool)
            if domain not in names:
                names.append(domain)
    return names


def partition_name(domain: str) -> str:
    """ "fide:standard" -> "fide.standard" (a name for streams, URLs and metrics)."""
    return domain.replace(":", ".")


def layout_of(layout: str, inputs: tuple[str, ...], output: str, dead_letter: str) -> Layout:
    """The partitions of a layout, from the stream names of the settings."""
    if layout == "single":
        return Layout(
            "single", tuple(Partition(s, s, output, dead_letter) for s in inputs), inputs[0]
        )
    if layout != "domains":
        raise ValueError(f"unknown partition layout {layout!r} (one of {', '.join(LAYOUTS)})")
    if len(inputs) != 1:
        raise ValueError(
            "the domains layout takes one input stream name (the suffix of every partition's)"
        )
    parts = []
    for domain in domain_names():
        name = partition_name(domain)
        input_, output_, dead_letter_ = (
            in_slot_of(name, s) for s in (inputs[0], output, dead_letter)
        )
        parts.append(Partition(name, input_, output_, dead_letter_, (domain,)))
    return Layout("domains", tuple(parts), inputs[0])


def cluster_problem(layout: Layout) -> str | None:
    """On a Redis Cluster, why the layout cannot run (None when it can): a partition's commit
    writes its output and dead-letter streams with its keys, in one MULTI/EXEC, so they must
    hash to the input stream's slot (docs/operations/partitions.md "Redis Cluster")."""
    from redis.crc import key_slot

    for partition in layout.partitions:
        streams = (partition.input, partition.output, partition.dead_letter)
        if len({key_slot(s.encode()) for s in streams}) > 1:
            output, dead_letter = (
                in_slot_of(partition.input, untagged(s))
                for s in (partition.output, partition.dead_letter)
            )
            return (
                f"on a Redis Cluster each partition's output and dead-letter streams must hash to its input "
                f"stream's slot, and {', '.join(streams)} do not: set RATING_PARTITIONS=domains, or name them "
                f"with the input stream's hash tag (RATING_OUTPUT_STREAM={output} "
                f"RATING_DEAD_LETTER_STREAM={dead_letter})"
            )
    return None


def misrouted(partition: Partition, layout: Layout, system: str, pool: str) -> str | None:
    """Why an event of (system, pool) does not belong on `partition` (None when it does)."""
    if partition.takes(system, pool):
        return None
    right = layout.route(system, pool)
    pools = ", ".join(f"{s}/{p}" for s, p in DOMAINS.pools(DOMAINS.of(system, pool)))
    return f"{system}/{pool} events belong on {right.input} (partition {right.name}: {pools}), not {partition.input}"


async def advertise(client: Any, layout: Layout, *, if_missing: bool = False) -> bool:
    """Say which partitions the service reads (`publish` and the other producing commands
    route by it; `rating-service streams` prints it). `if_missing`: only where no layout is
    advertised (the running service's look, storegate.py). Whether it was written."""
    return bool(
        await client.set(layout_key(layout.base), msgspec.json.encode(layout), nx=if_missing)
    )


async def advertised(client: Any, base: str) -> Layout | None:
    """The layout a service advertised for `base` (None: no service has started here yet, or
    an earlier version)."""
    raw = await client.get(layout_key(base))
    return None if raw is None else msgspec.json.decode(raw, type=Layout)
