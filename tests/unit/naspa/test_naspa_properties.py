"""Properties of the NASPA engine (hypothesis): determinism, a newcomer's monotonicity,
byes leave every rating alone, and the newcomers agree with the seed oracle."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from naspa_support import engine, event_input, rate, seed_newcomers

from service.engine.arithmetic import decimal_number

RATINGS = st.integers(min_value=300, max_value=2300)
CAREER = st.integers(min_value=0, max_value=120)
SCORES = st.sampled_from([0.0, 0.5, 1.0])


@st.composite
def events(draw, max_players: int = 8, max_games: int = 24, newcomers: int | None = None):
    """A small event: players (some newcomers), games between distinct players."""
    n = draw(st.integers(min_value=2, max_value=max_players))
    players = {}
    for i in range(n):
        unrated = draw(st.booleans()) if newcomers is None else i < newcomers
        players[f"p{i}"] = (None, 0) if unrated else (draw(RATINGS), draw(CAREER))
    ids = list(players)
    games = []
    for k in range(draw(st.integers(min_value=1, max_value=max_games))):
        a, b = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=2, unique=True))
        games.append((k % 16 + 1, a, b, draw(SCORES)))
    return players, games


ENCODE = msgspec.json.encode


@settings(max_examples=150, deadline=None)
@given(events(), st.sampled_from(["nsa2008", "naspa2024"]), st.booleans())
def test_deterministic(event, ruleset, one_third):
    players, games = event
    first = engine(ruleset).rate_event(
        event_input(players, games, ruleset=ruleset, one_third=one_third)
    )
    second = engine(ruleset).rate_event(
        event_input(players, games, ruleset=ruleset, one_third=one_third)
    )
    assert ENCODE(first) == ENCODE(second)


@settings(max_examples=150, deadline=None)
@given(events(), st.randoms(use_true_random=False))
def test_order_of_the_games_does_not_matter(event, rng):
    # Sums are exactly rounded (fsum) and all newcomers move together, so listing the
    # same games in another order gives the same ratings.
    players, games = event
    shuffled = list(games)
    rng.shuffle(shuffled)
    a, b = rate(players, games), rate(players, shuffled)
    assert {p: r.new_rating for p, r in a.items()} == {p: r.new_rating for p, r in b.items()}


@settings(max_examples=150, deadline=None)
@given(events(max_games=30), st.data())
def test_byes_change_no_rating(event, data):
    players, games = event
    ids = list(players)
    byes = data.draw(
        st.lists(
            st.tuples(st.integers(1, 16), st.sampled_from(ids), SCORES), min_size=1, max_size=6
        )
    )
    plain = rate(players, games, rounds=16)
    with_byes = rate(players, games, rounds=16, byes=byes)
    assert {p: r.new_rating for p, r in plain.items()} == {
        p: r.new_rating for p, r in with_byes.items()
    }


@st.composite
def newcomer_fields(draw):
    """One newcomer against rated players (1-16 games, whole wins and losses), other
    games among the rated players, and one of the newcomer's losses to flip."""
    opponents = draw(st.lists(RATINGS, min_size=1, max_size=6))
    players = {"N": (None, 0)} | {f"r{i}": (r, draw(CAREER)) for i, r in enumerate(opponents)}
    rated = [p for p in players if p != "N"]
    n = draw(st.integers(min_value=1, max_value=16))
    results = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    if 0.0 not in results:
        results[draw(st.integers(0, n - 1))] = 0.0
    games = [(k + 1, "N", draw(st.sampled_from(rated)), s) for k, s in enumerate(results)]
    extra = draw(st.integers(0, 6)) if len(rated) > 1 else 0
    for k in range(extra):
        a, b = draw(st.lists(st.sampled_from(rated), min_size=2, max_size=2, unique=True))
        games.append((k % 16 + 1, a, b, draw(SCORES)))
    losses = [i for i, s in enumerate(results) if s == 0.0]
    return players, games, draw(st.sampled_from(losses))


@settings(max_examples=200, deadline=None)
@given(newcomer_fields())
def test_a_newcomer_who_scores_more_never_rates_lower(field):
    # Domain: whole wins and losses, at most 16 games in one segment. (With a draw among
    # losses from 11 games on, or more than 20 games, the seed's exact-0 / exact-all
    # 5% / 95% rule makes a higher score rate lower: see test_letter_of_the_5_percent_rule.)
    players, games, flip = field
    better = list(games)
    k, a, b, _ = better[flip]
    better[flip] = (k, a, b, 1.0)
    assert rate(players, better)["N"].new_rating >= rate(players, games)["N"].new_rating


def test_letter_of_the_5_percent_rule_is_not_monotone_with_draws():
    # 12 games vs 1500 (g=100), 16 rounds, one segment. 0 of 12: w = 5% x 12 = 0.6, i.e.
    # E = 0.05 per game -> 577 (as 1 game). 0.5 of 12: w = 0.5 (the 5% rule applies only to
    # exactly 0), E = 0.5/12 = 0.041667 per game: r = 1500 - ln(23)/0.0031879 = 516.4 ->
    # search 516; caps 1500 and 1516.7 do not bind. The draw rates lower: the letter.
    players = {"N": (None, 0), "R": (1500, 100)}
    losses = [(k, "R", "N", 1) for k in range(1, 13)]
    drew = [(1, "R", "N", 0.5)] + losses[1:]
    assert rate(players, losses)["N"].new_rating == 577
    assert rate(players, drew)["N"].new_rating == 516  # probes end 520+ 517+ 516-


@settings(max_examples=150, deadline=None)
@given(events(max_players=6, max_games=10))
def test_newcomers_agree_with_the_seed_oracle(event):
    players, games = event
    result = rate(players, games)
    counted = [(a, b, s) for _, a, b, s in games]
    oracle = seed_newcomers({p: r for p, (r, _) in players.items()}, counted)
    for p, (value, passes, averaged) in oracle.items():
        d = result[p].details
        assert d.unrounded_rating == decimal_number(value)
        assert (d.newcomer_iterations, d.averaged) == (passes, averaged)
