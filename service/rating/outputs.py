"""The `ratings.updated/v1` messages an applied input publishes: an event's result (or a
revision of it), and a closed period's list in chunks."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from schemas.events import EventFinished, PeriodClosed, PeriodReopened
from schemas.ratings import Cause, RatingsUpdated
from schemas.records import PlayerRecord
from service.engine.contract import Engine
from service.readmodel import list_field

# Players per `ratings.updated` message of kind `list` (FIDE): RATING_CLOSE_PLAYERS's default, so
# that the service's paged close (a message a commit, D60) and the offline fold publish the same.
LIST_CHUNK = 100


def event_output(
    event: EventFinished,
    engine: Engine,
    results: list,
    source_id: str,
    records: Mapping[str, PlayerRecord] | None = None,
    **revision,
) -> RatingsUpdated:
    """The `ratings.updated/v1` of one event (a first result, or a revision of it). Each
    player's name is their record's (`records`: the records the event was rated from, named
    from the list, else from an event), else the event's."""
    names = {p.id: p.name for p in event.players if p.name}
    if records:
        for pid, record in records.items():
            if record.name:
                names[pid] = record.name
    if names:
        results = [
            msgspec.structs.replace(r, name=names[r.id]) if r.id in names else r for r in results
        ]
    if revision:
        return RatingsUpdated(
            kind="revision",
            system=event.system,
            pool=event.pool or "",
            ruleset=engine.ruleset,
            source_id=source_id,
            players=results,
            event_id=event.event_id,
            period=event.period,
            name=event.name,
            start_date=event.start_date,
            end_date=event.end_date,
            **revision,
        )
    # kind, system, pool, ruleset, source_id, players, event_id, period, chunk, chunks, name,
    # start_date, end_date (positional: the hot path)
    return RatingsUpdated(
        "event",
        event.system,
        event.pool or "",
        engine.ruleset,
        source_id,
        results,
        event.event_id,
        event.period,
        1,
        1,
        event.name,
        event.start_date,
        event.end_date,
    )


def list_outputs(
    message: PeriodClosed, engine: Engine, results: list, source_id: str
) -> list[RatingsUpdated]:
    """A closed period's list, LIST_CHUNK players a message, saying the period it is in force
    from (`Engine.list_period`)."""
    chunks = [results[i : i + LIST_CHUNK] for i in range(0, len(results), LIST_CHUNK)] or [[]]
    return [
        list_message(message, engine, chunk, source_id, n, len(chunks))
        for n, chunk in enumerate(chunks, 1)
    ]


def list_message(
    message: PeriodClosed, engine: Engine, results: list, source_id: str, chunk: int, chunks: int
) -> RatingsUpdated:
    """Message `chunk` of `chunks` of a closed period's list (a paged close publishes one a
    commit, D60)."""
    return RatingsUpdated(
        kind="list",
        system=message.system,
        pool=message.pool or "",
        ruleset=engine.ruleset,
        source_id=source_id,
        period=message.period,
        players=results,
        chunk=chunk,
        chunks=chunks,
        list_period=engine.list_period(message.period),
    )


def list_withdrawal(message: PeriodReopened, engine: Engine, source_id: str) -> RatingsUpdated:
    """A reopened period's list withdrawn, in one message whatever its chunks (F11): a
    revision of the list, `withdrawn`, no players, caused by the reopening of `list/<period>`."""
    return RatingsUpdated(
        kind="revision",
        system=message.system,
        pool=message.pool or "",
        ruleset=engine.ruleset,
        source_id=source_id,
        period=message.period,
        players=[],
        list_period=engine.list_period(message.period),
        revision=1,
        cause=Cause(type="reopened", event_id=list_field(message.period)),
        withdrawn=True,
    )
