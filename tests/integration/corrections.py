"""The date-order workloads (tests/cascade_workload.py) through a real Redis: several cases
interleaved in one input stream, and what the store, the output stream and the dead-letter
stream must hold afterwards - the offline twin's state (the same entries, the same arrival
order) and the date-order fold of the final events."""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import msgspec

from schemas import PlayerRecord, RatingsUpdated
from schemas.validation import InvalidMessage, decode_input
from service.engine.registry import default_registry
from service.formats.ratinglists import render_jsonl
from service.rating import Applied, Duplicate, MemoryLedger, Rejected, apply_message
from service.readmodel import rank_order
from service.runtime.keys import StreamKeys
from service.runtime.queries import ReadModel
from service.runtime.records_io import import_records
from service.runtime.replies import text
from service.runtime.store import DATA_FIELD
from service.timeline import arrival_of, encode_archived, split_history
from tests.cascade_workload import (
    Chooser,
    Model,
    Workload,
    check_against_fold,
    check_histories,
    check_revisions,
    current_lists,
    date_order_fold,
    figures,
    interleave,
    workload,
)
from tests.integration.helpers import outputs, pending, rejections
from tests.integration.processes import ROOT, stored_records

REGISTRY = default_registry()


@dataclass
class Mixed:
    """Cases interleaved in one stream: the messages in arrival order and, per message, the
    outcome the model expects."""

    workloads: list[Workload]
    messages: list[dict]
    expected: list[tuple[str, str | None, str | None]]
    models: list[Model]

    @property
    def start(self) -> list[PlayerRecord]:
        return [r for w in self.workloads for r in w.case.start]


def mixed(
    seed: int,
    cases: tuple[str, ...] = ("cfc", "fide-close", "naspa"),
    events: int = 20,
    extra: int = 24,
) -> Mixed:
    choose = Chooser(random.Random(seed))
    workloads = [
        workload(choose, name, events, extra, tag=f"{name.replace('-', '')}.") for name in cases
    ]
    merged = interleave(choose, workloads)
    models = [Model() for _ in workloads]
    expected = []
    for arrival, (i, message) in enumerate(merged, 1):
        expected.append(models[i].apply(decode_input(msgspec.json.encode(message)), arrival))
    return Mixed(workloads, [m for _, m in merged], expected, models)


async def load_lists(client, stream: str, m: Mixed) -> None:
    await import_records(client, StreamKeys(stream), m.start)


async def publish_all(client, stream: str, messages: list[dict | bytes]) -> list[str]:
    async with client.pipeline(transaction=False) as pipe:
        for message in messages:
            data = message if isinstance(message, bytes) else msgspec.json.encode(message)
            pipe.xadd(stream, {DATA_FIELD: data})
        return [i.decode() for i in await pipe.execute()]


@dataclass
class Offline:
    ledger: MemoryLedger
    outputs: list[RatingsUpdated]
    rejected: list[tuple[str, str, str]]  # (entry id, reason, path)


def offline(entries: list, start: list[PlayerRecord]) -> Offline:
    """The offline twin: the shared ledger over the stream's entries, in order, each with
    its entry's arrival (as the service and `replay` give it)."""
    ledger = MemoryLedger(start)
    produced: list[RatingsUpdated] = []
    rejected = []
    for raw_id, fields in entries:
        entry_id = text(raw_id)
        try:
            message = decode_input(fields[DATA_FIELD.encode()])
            result = apply_message(ledger, message, REGISTRY, entry_id, arrival_of(entry_id))
        except InvalidMessage as exc:
            rejected.append((entry_id, exc.reason, exc.path))
            continue
        except Rejected as exc:
            rejected.append((entry_id, exc.reason, exc.path))
            continue
        if isinstance(result, Applied):
            produced.extend(result.outputs)
        else:
            assert isinstance(result, Duplicate)
    return Offline(ledger, produced, rejected)


def rate_command(
    entries: list, start: list[PlayerRecord], tmp_path: Path
) -> tuple[dict, list[RatingsUpdated]]:
    """`rating-service rate --keep-going` over the entries: its final records and outputs."""
    events = tmp_path / "entries.jsonl"
    events.write_bytes(b"".join(fields[DATA_FIELD.encode()] + b"\n" for _, fields in entries))
    ratings = tmp_path / "start.jsonl"
    ratings.write_bytes(render_jsonl(start))
    final = tmp_path / "final.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "rate",
            str(events),
            "--ratings",
            str(ratings),
            "--keep-going",
            "--out-ratings",
            str(final),
        ],
        cwd=ROOT,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    records = [
        msgspec.json.decode(line, type=PlayerRecord) for line in final.read_bytes().splitlines()
    ]
    produced = [msgspec.json.decode(line, type=RatingsUpdated) for line in done.stdout.splitlines()]
    return {(r.system, r.pool, r.id): r for r in records}, produced


def last_per_event(produced: list[RatingsUpdated]) -> dict[str, RatingsUpdated]:
    return {o.event_id: o for o in produced if o.kind != "list" and o.event_id}  # type: ignore[misc]


def same_mapping(what: str, got: dict, want: dict) -> None:
    """Asserts `got == want`, naming what differs: the keys only one side holds (a few and how
    many) and the first key whose values differ, both values shown."""
    if got == want:
        return
    extra, missing = (
        sorted(map(str, got.keys() - want.keys())),
        sorted(map(str, want.keys() - got.keys())),
    )
    differ = [k for k in want.keys() & got.keys() if got[k] != want[k]]
    lines = [f"{what}: {len(got)} stored, {len(want)} expected; {len(differ)} differ"]
    if extra:
        lines.append(f"only stored ({len(extra)}): {extra[:5]}")
    if missing:
        lines.append(f"only expected ({len(missing)}): {missing[:5]}")
    if differ:
        first = sorted(differ, key=str)[0]
        lines.append(f"first differing {first}: stored {got[first]!r} expected {want[first]!r}")
    raise AssertionError("\n".join(lines))


async def redis_structures(client, keys: StreamKeys) -> dict:
    """The archive, the timelines and the histories as stored (what later cascades read)."""
    found: dict = {"events": {text(k): v for k, v in (await client.hgetall(keys.events)).items()}}
    for name in ("timeline", "history"):
        prefix = getattr(keys, f"_{name}") + ":"
        pattern = prefix.replace("{", "\\{").replace("}", "\\}") + "*"
        async for key in client.scan_iter(match=pattern, count=1_000):
            if name == "history":  # one string a player (D121)
                found[text(key)] = split_history(await client.get(key))
            else:
                found[text(key)] = await client.zrange(key, 0, -1)
    return found


def ledger_structures(ledger: MemoryLedger, keys: StreamKeys) -> dict:
    found: dict = {"events": {eid: encode_archived(a) for eid, a in ledger.archives.items()}}
    for domain, members in ledger.timelines.items():
        if members:
            found[keys.timeline(domain)] = members
    for who, members in ledger.histories.items():
        if members:
            found[keys.history(*who)] = members
    return found


async def check_against_offline_and_fold(
    client, settings, m: Mixed, tmp_path: Path | None = None, fold: bool = True
) -> Offline:
    """The store, the output stream and the dead letters against the offline twin (and
    `rate` itself, with `tmp_path`) and against the date-order fold of the final events."""
    stream = settings.input_streams[0]
    keys = StreamKeys(stream)
    entries = await client.xrange(stream)
    twin = offline(entries, m.start)
    stored = await stored_records(client, settings)
    same_mapping(
        "records", stored, {(r.system, r.pool, r.id): r for r in twin.ledger.all_records()}
    )
    produced = await outputs(client, settings)
    check_revisions(produced)  # one output per (event id, revision), in order
    assert [figures(o) for o in produced] == [figures(o) for o in twin.outputs]
    assert [o.source_id for o in produced] == [o.source_id for o in twin.outputs]
    same_mapping(
        "structures", await redis_structures(client, keys), ledger_structures(twin.ledger, keys)
    )
    dead = [(r.source_id, r.reason, r.path) for r in await rejections(client, settings)]
    assert dead == twin.rejected
    if tmp_path is not None:
        records, rated = rate_command(entries, m.start, tmp_path)
        assert records == stored
        ours, theirs = last_per_event(produced), last_per_event(rated)
        assert ours.keys() == theirs.keys()
        assert all(figures(ours[e]) == figures(theirs[e]) for e in ours)
    # The design's own account: what the model expects of each entry, and the fold.
    ids = [text(i) for i, _ in entries]
    assert len(ids) == len(m.messages)
    assert dead == [
        (ids[n], reason, path)
        for n, (what, reason, path) in enumerate(m.expected)
        if what == "rejected"
    ]
    histories = await check_read_model(client, stream, twin.ledger)
    if fold:
        folded = date_order_fold(m.start, m.models, REGISTRY)
        check_against_fold(
            stored.values(),
            last_per_event(produced),
            current_lists(produced),
            m.models,
            folded,
        )
        check_histories(lambda *who: histories[who], histories, folded)
    assert await pending(client, settings) == 0
    return twin


async def check_read_model(client, stream: str, ledger: MemoryLedger) -> dict:
    """What the read API answers equals the offline twin's read model: every player's
    history, every event's last message, every pool's ranked list. Returns the histories."""
    reads = ReadModel(client, [stream])
    histories = {}
    for who in sorted(who for who, lines in ledger.projection.entries.items() if lines):
        answer = await reads.history(*who)
        assert answer is not None, who
        assert answer.entries == ledger.history(*who), who
        histories[who] = answer.entries
    for eid, message in ledger.projection.results.items():
        assert await reads.event(eid) == message, eid
    for (system, pool), records in ledger.records.items():
        page = await reads.players(system, pool, limit=10_000, unrated=True)
        assert page is not None
        assert [p.id for p in page.players] == [
            r.id for r in sorted(records.values(), key=rank_order)
        ]
        rated = sorted((r.rating for r in records.values() if r.rating is not None), reverse=True)
        assert [p.rank for p in page.players if p.rating is not None] == [
            rated.index(r) + 1 for r in rated
        ]
    return histories
