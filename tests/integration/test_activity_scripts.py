"""The lists' activity scripts (D46, D67) against a model of what they keep, on a real Redis:
the active ranking after players' last rated games and the list's date moved (`active_writes`),
and the last rated game of the players of re-rated events (`rerated_played`), whose ZADD GT
runs go in one call each between the recount checks."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from schemas.reads import HistoryEntry
from service.lists import ACTIVE_DAYS
from service.readmodel import pack_entry
from service.runtime.keys import StreamKeys
from service.runtime.store import active_writes, rerated_played

pytestmark = pytest.mark.integration

SYSTEM, POOL = "cfc", "regular"
PLAYERS = [f"p{i}" for i in range(12)]
DAY0 = dt.date(2025, 1, 1).toordinal()

_day = st.integers(DAY0 - 2 * ACTIVE_DAYS, DAY0)
_played = st.dictionaries(st.sampled_from(PLAYERS), _day, max_size=len(PLAYERS))
# what changes between two commits: a player's last rated game moved, or gone (None)
_moves = st.dictionaries(st.sampled_from(PLAYERS), _day | st.none(), max_size=8)
# most players ranked (a score), some not (None)
_ranking = st.lists(
    st.integers(0, 3000) | st.integers(0, 3000) | st.none(),
    min_size=len(PLAYERS),
    max_size=len(PLAYERS),
).map(lambda scores: {p: s for p, s in zip(PLAYERS, scores) if s is not None})
# A FIDE close's "<day> <first active day>", or none ("-": the stored one, or the latest event's)
_closed = (
    st.none() | st.none() | st.tuples(_day, st.integers(0, 400)).map(lambda t: (t[0], t[0] - t[1]))
)


def _settings():
    return settings(
        max_examples=80,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


_examples = itertools.count()


def _keys(key_prefix: str) -> StreamKeys:
    """A stream's keys of this example's own (the test's prefix is the same for each example;
    the conftest deletes every key under it after the test)."""
    return StreamKeys(f"{key_prefix}.{next(_examples)}")


def _run(client, commands) -> None:
    for command in commands:
        client.execute_command(*command)


def _expected_active(played, ranking, ref, first) -> dict[str, float]:
    """The whole active ranking, recomputed: the ranked players whose last rated game is on
    the first active day or later."""
    if ref <= 0:
        return {}
    return {p: float(ranking[p]) for p, day in played.items() if day >= first and p in ranking}


def _list_day(closed, latest) -> tuple[int, int]:
    if closed is not None:
        return closed
    return latest, (latest - ACTIVE_DAYS + 1 if latest > 0 else 0)


@_settings()
@given(
    before=_played,
    moves=_moves,
    ranking=_ranking,
    latest=st.tuples(_day | _day | st.just(0), _day | _day | st.just(0)),
    closed=st.tuples(_closed, _closed),
    extra=st.sets(st.sampled_from(PLAYERS), max_size=10),
)
@example(  # the first active day moves back: a player who did not change comes in
    before={"p1": DAY0 - 400},
    moves={},
    ranking={"p1": 7},
    latest=(DAY0, DAY0 - 100),
    closed=(None, None),
    extra=set(),
)
@example(  # the first active day moves on: a player who did not change goes
    before={"p1": DAY0 - 400},
    moves={},
    ranking={"p1": 7},
    latest=(DAY0 - 100, DAY0),
    closed=(None, None),
    extra=set(),
)
@example(  # a last rated game on the first active day itself: active
    before={},
    moves={"p1": DAY0 - ACTIVE_DAYS + 1},
    ranking={"p1": 7},
    latest=(DAY0, DAY0),
    closed=(None, None),
    extra=set(),
)
def test_the_active_ranking_follows_the_players_and_the_list_date(
    redis_url, key_prefix, before, moves, ranking, latest, closed, extra
):
    """Built whole, then kept by the players whose last rated game changed (and some that did
    not), while the first active day moves forward or back: the set a recount would make."""
    import redis

    client: Any = redis.Redis.from_url(redis_url)
    keys = _keys(key_prefix)
    played_key, dated = keys.played(SYSTEM, POOL), keys.dated(SYSTEM, POOL)
    try:
        after = {p: d for p, d in {**before, **moves}.items() if d is not None}
        stored_close = None  # the close the list date keeps: the last one given
        steps = []
        for played, last, close in zip((before, after), latest, closed):
            stored_close = close if close is not None else stored_close
            # a pool without a list date has no rated game either (its events are its dates)
            played = played if last or stored_close else {}
            steps.append((played, last, close, _list_day(stored_close, last)))
        (before, *_), (after, *_) = steps
        for step, (played, last, close, (ref, first)) in enumerate(steps):
            client.delete(played_key, dated)
            if played:
                client.zadd(played_key, played)
            if last:
                client.zadd(dated, {"e-latest": last})
            if step == 0:
                if ranking:
                    client.zadd(keys.ranking(SYSTEM, POOL), ranking)
                changed: set[str] = set()
            else:
                changed = {p for p in PLAYERS if before.get(p) != after.get(p)} | extra
            arg = "-" if close is None else f"{close[0]} {close[1]}"
            _run(client, active_writes(keys, SYSTEM, POOL, arg, sorted(changed)))
            got = dict(client.zrange(keys.active(SYSTEM, POOL), 0, -1, withscores=True))
            assert {k.decode(): v for k, v in got.items()} == _expected_active(
                played, ranking, ref, first
            )
    finally:
        client.close()


def _line(day: int, games: int, event: str) -> bytes:
    key = bytes(3) + day.to_bytes(3, "big") + day.to_bytes(3, "big") + bytes(8)
    date = dt.date.fromordinal(day)
    return pack_entry(
        key,
        HistoryEntry(
            "event",
            event,
            None,
            date,
            date,
            None,
            None,
            1500,
            1510,
            10,
            "established",
            "established",
            20,
            games,
            games / 2,
            None,
            None,
        ),
    )


_lines = st.lists(
    st.tuples(st.sampled_from(PLAYERS[:3]), st.integers(0, 5), st.booleans()), max_size=25
)


@_settings()
@given(start=st.dictionaries(st.sampled_from(PLAYERS[:6]), st.integers(0, 5)), lines=_lines)
@example(  # a raise, then a check of the day it raised to: the raise is in before the check
    start={"p0": 1}, lines=[("p0", 3, True), ("p0", 3, False)]
)
def test_the_last_rated_game_of_re_rated_players_is_kept_in_order(
    redis_url, key_prefix, start, lines
):
    """Each line in turn: with rated games, the day if later; without, a recount from the
    player's history lines when the day was theirs, so the GT runs between such checks keep
    their order."""
    import redis

    client: Any = redis.Redis.from_url(redis_url)
    keys = _keys(key_prefix)
    played_key = keys.played(SYSTEM, POOL)
    # Every player's history lines: an event a day of days 0-5, rated games on even days.
    history = {p: {d: d % 2 == 0 for d in range(6)} for p in PLAYERS[:6]}
    try:
        for p, days in history.items():
            client.hset(
                keys.entries(SYSTEM, POOL, p),
                mapping={f"e{d}": _line(DAY0 + d, 2 if g else 0, f"e{d}") for d, g in days.items()},
            )
        if start:
            client.zadd(played_key, {p: DAY0 + d for p, d in start.items()})
        model = {p: DAY0 + d for p, d in start.items()}
        for p, d, games in lines:
            if games:
                model[p] = max(model.get(p, 0), DAY0 + d)
            elif model.get(p) == DAY0 + d:
                rated = [DAY0 + x for x, g in history[p].items() if g]
                model[p] = max(rated)
        args = [(p, DAY0 + d, games) for p, d, games in lines]
        _run(client, rerated_played(keys, SYSTEM, POOL, args))
        got = {k.decode(): int(v) for k, v in client.zrange(played_key, 0, -1, withscores=True)}
        assert got == model
    finally:
        client.close()
