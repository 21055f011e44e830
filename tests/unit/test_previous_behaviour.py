"""The optimized engines and apply-path helpers against their previous code (tests/previous:
the code before the hot-path work, verbatim), on random events: every output must be the
same, byte for byte (the Structs encoded), and every rejection the same; for FIDE, the
list that closing the period then publishes too.

The events are random Swiss-like events (2 to 30 players, 1 to 11 rounds, some games
unplayed, forfeits, byes, birth years given) among random records of every kind the rules
distinguish: CFC unrated, provisional (with and without C1's exact sum, fractional or not)
and established players near the 800 and 2199 thresholds; FIDE unrated players with pooled
games and a first event, established players with open period sums, kept lists (some
from about 24 months back, F1), K overrides, juniors and 2300 / 2400 flags, events starting
on both sides of the 2025-10-01 amendment (F3); plus the bench's 1,000-player 9-round events.
"""

from __future__ import annotations

import datetime as dt
import random

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.cfc import CfcState
from schemas.events import Bye, EventFinished, Game, PeriodClosed, PlayerRef
from schemas.fide import FideState, FirstEvent, InitialGame, PeriodSums, PublishedRating
from schemas.records import PlayerRecord, PoolState
from service import rating, readmodel, timeline
from service.bench.benchmark import engine_input
from service.compact import expand
from service.engine import arithmetic
from service.engine.cfc import CfcEngine
from service.engine.contract import EngineRejection, EventInput
from service.engine.fide import FideEngine
from tests.previous import arithmetic as previous_arithmetic
from tests.previous import ledger as previous_ledger
from tests.previous.cfc_engine import CfcEngine as PreviousCfcEngine
from tests.previous.contract import EngineRejection as PreviousEngineRejection
from tests.previous.fide_engine import FideEngine as PreviousFideEngine

ENGINES = {"cfc": (CfcEngine(), PreviousCfcEngine()), "fide": (FideEngine(), PreviousFideEngine())}
_encode = msgspec.msgpack.Encoder().encode
RANDOM = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cfc_record(rng: random.Random, pid: str, pool: str) -> PlayerRecord:
    kind = rng.random()
    if kind < 0.2:
        return PlayerRecord(system="cfc", pool=pool, id=pid)
    rating = rng.choice([rng.randint(100, 2700), rng.randint(780, 820), rng.randint(2150, 2250)])
    highest = rating + rng.randint(0, 200) if rng.random() < 0.8 else None
    if kind < 0.45:
        games = rng.randint(1, 24)
        exact = rng.choice(
            [None, str(rating * games + rng.randint(-3, 3)), f"{rating * games * 3 + 1}/3"]
        )
        return PlayerRecord(
            system="cfc",
            pool=pool,
            id=pid,
            rating=rating,
            status="provisional",
            games=games,
            highest=highest,
            cfc=CfcState(provisional_sum=exact) if exact else None,
        )
    return PlayerRecord(
        system="cfc",
        pool=pool,
        id=pid,
        rating=rating,
        status="established",
        games=rng.randint(25, 900),
        highest=highest,
    )


def fide_record(rng: random.Random, pid: str, pool: str) -> PlayerRecord:
    if rng.random() < 0.2:
        pooled = [
            InitialGame(
                period=rng.choice(["2025-09", "2025-10", "2025-11"]),
                event_id=f"x{i}",
                start_date=dt.date(2025, 9, 1 + i),
                opponent_rating=rng.randint(1400, 2500),
                score_halves=rng.randint(0, 2),
            )
            for i in range(rng.randint(0, 8))
        ]
        first = (
            FirstEvent(start_date=dt.date(2025, 9, 1), event_id="x0")
            if pooled and rng.random() < 0.5
            else None
        )
        return PlayerRecord(
            system="fide",
            pool=pool,
            id=pid,
            birth_year=rng.choice([None, 2010, 1990]),
            fide=FideState(initial_games=pooled, first_event=first) if pooled else None,
        )
    rating = rng.randint(1400, 2850)
    periods, published = [], []
    if rng.random() < 0.4:
        n = rng.randint(1, 30)
        periods = [
            PeriodSums(
                period="2025-11",
                sum_hundredths=rng.randint(-50 * n, 50 * n),
                games=n,
                points_halves=rng.randint(0, 2 * n),
            )
        ]
    if rng.random() < 0.3:
        published = [
            PublishedRating(
                period="2025-10", rating=rating - rng.randint(-50, 50), k=rng.choice([None, 20, 40])
            ),
            PublishedRating(period="2025-11", rating=rating),
        ]
        if rng.random() < 0.5:
            # Two lists from about 24 months before the list that closing 2025-11 publishes
            # (2025-12): F1 keeps those whose successor is in force after 2023-12.
            old = sorted(rng.sample(["2023-10", "2023-11", "2023-12", "2024-01", "2024-02"], 2))
            published[:0] = [PublishedRating(period=p, rating=rating) for p in old]
    return PlayerRecord(
        system="fide",
        pool=pool,
        id=pid,
        rating=rating,
        status="established",
        games=rng.randint(0, 600),
        birth_year=rng.choice([None, rng.randint(1950, 2015)]),
        ever_2300=rng.random() < 0.1,
        ever_2400=rng.random() < 0.05,
        k=rng.choice([None] * 8 + [10, 20, 40]),
        fide=FideState(periods=periods, published=published) if periods or published else None,
    )


def random_event(rng: random.Random, system: str) -> EventInput:
    """A Swiss-like event among random records (module docstring)."""
    pool = rng.choice(["regular", "active"] if system == "cfc" else ["standard", "rapid", "blitz"])
    ids = [f"q{i:03d}" for i in range(rng.choice([2, 2, 2, 3, 4, 6, 10, 17, 30]))]
    make = cfc_record if system == "cfc" else fide_record
    records = {pid: make(rng, pid, pool) for pid in ids}
    rounds = rng.randint(1, 11)
    games, byes = [], []
    for rnd in range(1, rounds + 1):
        order = ids[:]
        rng.shuffle(order)
        if len(order) % 2:
            byes.append(Bye(round=rnd, player=order.pop(), score=rng.choice([0.0, 0.5, 1.0])))
        for a, b in zip(order[::2], order[1::2]):
            if rng.random() < 0.1:
                continue
            games.append(
                Game(
                    round=rnd,
                    a=a,
                    b=b,
                    score=rng.choice([0.0, 0.5, 1.0]),
                    forfeit=rng.random() < 0.03,
                )
            )
    if rng.random() < 0.2:
        rng.shuffle(games)  # rounds reported out of order
    event = EventFinished(
        event_id=f"ev{rng.randint(0, 9999)}",
        system=system,
        name="Random",
        rounds=rounds,
        pool=pool,
        start_date=rng.choice([dt.date(2025, 11, 1), dt.date(2025, 10, 30), dt.date(2025, 9, 20)]),
        end_date=dt.date(2025, 11, 20),
        players=[PlayerRef(id=p, birth_year=rng.choice([None, None, 2012])) for p in ids],
        games=games,
        byes=byes,
        ruleset="cfc-2009" if system == "cfc" else "fide-2024",
        period="2025-11" if system == "fide" else None,
    )
    return EventInput(event, records, PoolState(system=system, pool=pool))  # type: ignore[arg-type]


def rated(engine, data: EventInput) -> bytes | tuple:
    """The outcome encoded, or the rejection (each side raises its own contract's class:
    tests/previous holds a frozen copy of service/engine/contract.py)."""
    try:
        return _encode(engine.rate_event(data))
    except (EngineRejection, PreviousEngineRejection) as exc:
        return type(exc).__name__, exc.reason, exc.message, exc.path


@RANDOM
@given(st.randoms(use_true_random=False), st.sampled_from(["cfc", "fide"]))
def test_engines_rate_as_before(rng, system):
    engine, previous = ENGINES[system]
    data = random_event(rng, system)
    assert rated(engine, data) == rated(previous, data)
    if system == "fide":
        try:
            records = {r.id: r for r in engine.rate_event(data).records}
        except EngineRejection:
            records = dict(data.records)
        close = PeriodClosed(system="fide", pool=data.event.pool, period="2025-11")
        assert closed(engine, close, records, data) == closed(previous, close, records, data)


def closed(engine, close: PeriodClosed, records, data: EventInput) -> bytes | tuple:
    """The new list encoded, or the rejection (as `rated`)."""
    try:
        return _encode(engine.close_period(close, records, data.pool))
    except (EngineRejection, PreviousEngineRejection) as exc:
        return type(exc).__name__, exc.reason, exc.message, exc.path


def test_the_bench_events_rate_as_before():
    for system in ENGINES:
        data = engine_input(system, 1000, 9, 50, 0.2)
        engine, previous = ENGINES[system]
        assert rated(engine, data) == rated(previous, data)


@RANDOM
@given(st.integers(-(10**9), 10**9), st.integers(1, 10**6))
def test_ratio_number_as_before(num, den):
    assert arithmetic.ratio_number(num, den) == previous_arithmetic.ratio_number(num, den)


def _key(order_key, event: EventFinished, arrival: int) -> bytes | type:
    try:
        return order_key(event, arrival)  # the previous signature: the engine's prefix inside
    except OverflowError:
        return OverflowError


def _line(value: bytes, field: str) -> tuple[bytes, object]:
    """A stored history line as read back: its order key and the line (D102's encoding or
    the previous plain one), the previous code's value being the plain one; without the
    event's name, which a line of D122's encoding leaves to `{S}:eventnames`."""
    return value[: timeline.KEY_LEN], msgspec.structs.replace(
        readmodel.unpack_entry(value, field), name=None
    )


@RANDOM
@given(
    st.randoms(use_true_random=False), st.sampled_from(["cfc", "fide"]), st.integers(0, 2**64 - 1)
)
def test_apply_helpers_as_before(rng, system, arrival):
    """The order key, the packed states (history members), the event's message and its
    history lines (and, for FIDE, a closed period's list and its lines), from real outcomes."""
    engine, _ = ENGINES[system]
    data = random_event(rng, system)
    event = data.event
    prefix = engine.order_prefix(event)
    assert timeline.order_key(event, arrival, prefix) == previous_ledger.order_key(event, arrival)
    for beyond in (-1, 2**64):
        assert _key(lambda e, a: timeline.order_key(e, a, prefix), event, beyond) is _key(
            previous_ledger.order_key, event, beyond
        )
    try:
        outcome = engine.rate_event(data)
    except EngineRejection:
        return
    for record in [*data.records.values(), *outcome.records]:
        # the same MessagePack but for a FIDE state's arrays (D123), stored compact where
        # that is shorter (D100); a state packed by the previous code reads back as the same
        # record, as this one's does
        packed, previous = timeline.pack_state(record), previous_ledger.pack_state(record)
        if record.fide is None:
            assert expand(packed) == previous
        assert len(packed) <= len(previous)
        who = (record.system, record.pool, record.id)
        assert timeline.unpack_state(*who, previous) == record
        assert timeline.unpack_state(*who, packed) == record
    named = {
        pid: msgspec.structs.replace(r, name=f"N {pid}") if rng.random() < 0.3 else r
        for pid, r in data.records.items()
    }
    output = rating.event_output(event, engine, outcome.results, "1-0", named)
    assert _encode(output) == _encode(
        previous_ledger.event_output(event, engine, outcome.results, "1-0", named)
    )
    key = timeline.order_key(event, arrival, prefix)
    # the same lines, stored in D102's encoding: each reads back as the previous code's
    lines = [
        (pid, field, _line(readmodel.pack_entry(key, entry), field))
        for pid, field, entry in readmodel.entries_of(output)
    ]
    before = [
        (pid, field, _line(previous_ledger.pack_entry(key, entry), field))
        for pid, field, entry in previous_ledger.entries_of(output)
    ]
    assert lines == before
    if system == "fide":
        close = PeriodClosed(system="fide", pool=event.pool, period="2025-11")
        try:
            listed = engine.close_period(close, {r.id: r for r in outcome.records}, data.pool)
        except EngineRejection:
            return
        for message in rating.list_outputs(close, engine, listed.results, "2-0"):
            key = readmodel.list_key(close.period)
            assert [
                (pid, field, _line(readmodel.pack_entry(key, entry), field))
                for pid, field, entry in readmodel.entries_of(message)
            ] == [
                (pid, field, _line(previous_ledger.pack_entry(key, entry), field))
                for pid, field, entry in previous_ledger.entries_of(message)
            ]
