"""The CFC engine (cfc-2009) against an independent reference (`reference.py`) on random
events and sequences of events: new ratings, statuses, games, C1 provisional sums."""

from __future__ import annotations

import math
from fractions import Fraction
from math import ceil

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.cfc import CfcState
from schemas.records import PlayerRecord, PoolState
from schemas.validation import decode_input
from service.engine.contract import EngineRejection, EventInput
from service.engine.registry import default_registry

from . import reference as ref

F = Fraction
ENGINE = default_registry().get("cfc", "cfc-2009")
POOL = "regular"


# ---------------------------------------------------------------- adapters


def to_record(pid: str, p: ref.Prior) -> PlayerRecord:
    def exact(x: Fraction) -> str:
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

    return PlayerRecord(
        system="cfc",
        pool=POOL,
        id=pid,
        rating=p.rating,
        status=p.status,  # type: ignore[arg-type]
        games=p.games,
        highest=p.highest,
        cfc=CfcState(provisional_sum=exact(p.prov_sum)) if p.prov_sum is not None else None,
    )


def from_record(r: PlayerRecord) -> ref.Prior:
    s = r.cfc.provisional_sum if r.cfc is not None else None
    return ref.Prior(r.status, r.rating, r.games, r.highest, F(s) if s is not None else None)


def engine_rate(priors: dict[str, ref.Prior], games: list[tuple], byes: list[tuple], rounds: int):
    msg = {
        "schema": "event.finished/v1",
        "event_id": "audit",
        "system": "cfc",
        "pool": POOL,
        "ruleset": "cfc-2009",
        "name": "Audit event",
        "start_date": "2009-05-01",
        "end_date": "2009-05-03",
        "rounds": rounds,
        "players": [{"id": p} for p in priors],
        "games": [
            {"round": rnd, "a": a, "b": b, "score": float(s), **({"forfeit": True} if ff else {})}
            for a, b, s, rnd, ff in games
        ],
        "byes": [{"player": p, "score": s, "round": r} for p, s, r in byes],
    }
    event = decode_input(msgspec.json.encode(msg))
    records = {pid: to_record(pid, p) for pid, p in priors.items()}
    out = ENGINE.rate_event(EventInput(event, records, PoolState(system="cfc", pool=POOL)))  # type: ignore[arg-type]
    new = dict(priors)
    for rec in out.records:
        new[rec.id] = from_record(rec)
    return {r.id: r for r in out.results}, new


def ref_rate(priors, games, rounds):
    rg = [ref.RefGame(a, b, F(s), ff) for a, b, s, rnd, ff in games]
    return ref.rate_event(priors, rg, rounds)


def eff_sum(p: ref.Prior):
    if p.status != "provisional":
        return None
    return p.prov_sum if p.prov_sum is not None else F(p.rating) * p.games


def compare(priors, games, byes, rounds):
    """Rate with both; return (diffs, engine's new priors, reference's new priors)."""
    try:
        results, eng_new = engine_rate(priors, games, byes, rounds)
    except EngineRejection as exc:
        eng_rejected, eng_new = exc, None
    else:
        eng_rejected = None
    try:
        rres, ar = ref_rate(priors, games, rounds)
    except ref.Unratable as exc:
        ref_rejected = exc
    else:
        ref_rejected = None
    if eng_rejected or ref_rejected:
        if bool(eng_rejected) != bool(ref_rejected):
            return [f"rejection: engine={eng_rejected!r} reference={ref_rejected!r}"], None, None
        return [], None, None
    diffs = []
    ref_new = {}
    for pid in priors:
        e, r = eng_new[pid], rres[pid]
        ref_new[pid] = ref.Prior(
            r.status,
            r.rating,
            r.games,
            r.highest,
            r.prov_sum if r.status == "provisional" else None,
        )
        res = results[pid]
        got = (res.new_rating, res.status, res.games, eff_sum(e))
        want = (r.rating, r.status, r.games, eff_sum(ref_new[pid]))
        rec = (e.rating, e.status, e.games)
        if got != want or rec != want[:3]:
            diffs.append(
                f"{pid}: prior={priors[pid]} engine={got} record={rec} reference={want} ref_detail={r}"
            )
        if e.highest != r.highest:
            diffs.append(
                f"{pid}: highest engine={e.highest} reference={r.highest} prior={priors[pid]}"
            )
        diffs.extend(f"{pid}: {d}" for d in detail_diffs(res.details, r, ar))
    return diffs, eng_new, ref_new


def detail_diffs(d, r: ref.Result, ar):
    """The key intermediate figures, where the reference computed them."""
    if r.method == "none":
        return (
            []
            if d is None or d.method == "none"
            else [f"method {d.method} for a player without rated games"]
        )
    ex = lambda x: None if x is None else F(x)  # noqa: E731
    pairs = [
        ("method", d.method, r.method),
        ("performance", ex(d.performance_exact), r.performance),
        ("rating_before_floor", d.rating_before_floor, r.before_floor),
        ("floor", d.floor, r.floor),
        ("opponent values", sorted(F(o.value_exact) for o in d.opponents), sorted(r.opp_values)),
    ]
    if d.ar_exact is not None:
        pairs.append(("ar", F(d.ar_exact), ar))
    if r.pass_1 is not None:
        pairs.append(("pass_1", ex(d.pass_1_exact), r.pass_1))
    if r.method == "established":
        pairs += [
            ("k", d.k, r.k),
            ("Sx", d.expected_hundredths, r.sx * 100),
            ("714b before bonus", ex(d.rating_before_bonus_exact), r.rn_714b),
            ("rule_2199", d.rule_2199, r.rule_2199),
            ("participation", F(d.participation_bonus_exact), r.participation),
            ("result_bonus", d.result_bonus, r.result_bonus),
        ]
        if r.highest_before is not None:
            pairs.append(("highest_before", d.highest_before, r.highest_before))
        if r.result_percent is not None:
            pairs.append(("result_percent", d.result_percent, r.result_percent))
    elif (
        r.status == "provisional"
    ):  # (a new player rated by 714a over 25+ games: informational only)
        pairs.append(("provisional_sum", ex(d.provisional_sum_exact), r.prov_sum))
    # The numbers beside the exact values (schemas/ratings.py "Numbers"): the reference's
    # figure to 2 decimals, half away from zero.
    numbers = [
        ("performance", d.performance, r.performance),
        (
            "opponent values",
            sorted(o.value for o in d.opponents),
            [two_decimals(v) for v in sorted(r.opp_values)],
        ),
    ]
    if r.pass_1 is not None:
        numbers.append(("pass_1", d.pass_1, r.pass_1))
    if r.method == "established":
        numbers.append(("714b before bonus", d.rating_before_bonus, r.rn_714b))
    pairs += [
        (f"{name} (number)", a, b if isinstance(b, list) else two_decimals(b))
        for name, a, b in numbers
    ]
    return [f"{name}: engine={a} reference={b}" for name, a, b in pairs if a != b]


def two_decimals(x) -> float | None:
    """x to 2 decimals, half away from zero, as a float: written apart from the engine's helper."""
    if x is None:
        return None
    x = F(x)
    magnitude = math.floor(abs(x) * 100 + F(1, 2))
    return float(F(magnitude if x >= 0 else -magnitude, 100))


# ---------------------------------------------------------------- strategies


@st.composite
def priors_st(draw):
    kind = draw(
        st.sampled_from(("unrated", "provisional", "provisional", "established", "established"))
    )
    if kind == "unrated":
        return ref.Prior("unrated")
    if kind == "provisional":
        g = draw(st.integers(1, 24) | st.integers(16, 24))
        if draw(st.integers(0, 9)) == 0:  # a 716c-floored provisional: sum / games below 200
            x = draw(st.integers(-300, 199))
            return ref.Prior(
                "provisional",
                200,
                g,
                200 + draw(st.integers(0, 300)),
                F(x * g) + F(draw(st.integers(0, 6)), 7),
            )
        rating = draw(st.integers(200, 2600))
        if draw(st.booleans()):
            s = None  # imported: rating x games (C1)
        else:
            d = draw(st.sampled_from((1, 2, 3, 7)))
            k = draw(st.integers(ceil(-g * d / 2), ceil(g * d / 2) - 1))
            s = F(rating * g) + F(k, d)
        return ref.Prior("provisional", rating, g, rating + draw(st.integers(0, 200)), s)
    rating = draw(
        st.integers(100, 2600)
        | st.integers(100, 820)
        | st.integers(2150, 2230)
        | st.integers(2600, 3200)
        | st.integers(780, 820)
        | st.sampled_from((799, 800, 1000, 1001, 1800, 1801, 2000, 2001, 2198, 2199, 2200, 2201))
    )
    games = draw(
        st.integers(25, 400) | st.integers(0, 24)
    )  # an import may be established with few games
    highest = draw(st.none() | st.sampled_from((0, 0, 1, 50, 300, -1)).map(lambda h: rating + h))
    return ref.Prior("established", rating, games, highest)


@st.composite
def event_st(draw, pids):
    """(games, byes, rounds) with random pairings, forfeits, byes, repeated pairings."""
    played_rounds = draw(st.integers(1, 9))
    # `rounds` (rounds actually played, C4/C5) may exceed the last round with a game
    rounds = played_rounds + draw(st.sampled_from((0, 0, 0, 1, 3)))
    games, byes = [], []
    # sometimes several games per round (a match or a double round robin in one round):
    # lets a new player reach 25 games in one event
    per_round = draw(st.sampled_from((1,) * 6 + (2, 4)))
    for rnd in [r for r in range(1, played_rounds + 1) for _ in range(per_round)]:
        order = draw(st.permutations(pids))
        for a, b in zip(order[::2], order[1::2]):
            what = draw(st.sampled_from(("game",) * 6 + ("forfeit", "none")))
            score = draw(st.sampled_from((0, 0.5, 1)))
            if what != "none":
                games.append((a, b, score, rnd, what == "forfeit"))
        if len(order) % 2 and draw(st.booleans()):
            byes.append((order[-1], draw(st.sampled_from((0, 0.5, 1))), rnd))
    return games, byes, rounds


@st.composite
def sequence_st(draw):
    n = draw(st.integers(2, 12))
    pids = [f"p{i}" for i in range(n)]
    priors = {p: draw(priors_st()) for p in pids}
    events = [draw(event_st(pids)) for _ in range(draw(st.integers(1, 3)))]
    return priors, events


STATS = {"events": 0, "agreed": 0, "rejected": 0}


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(sequence_st())
def test_engine_agrees_with_reference(seq):
    priors, events = seq
    for games, byes, rounds in events:
        diffs, eng_new, ref_new = compare(priors, games, byes, rounds)
        STATS["events"] += 1
        assert not diffs, "\n".join(diffs) + f"\nrounds={rounds} games={games} byes={byes}"
        if eng_new is None:
            STATS["rejected"] += 1
            return
        STATS["agreed"] += 1
        priors = ref_new


# ---------------------------------------------------------------- hand-worked boundary cases
# Each figure below is worked by hand from the seed and C1-C11; engine and reference must
# both give it. (Random events rarely land exactly on these boundaries.)

E = lambda r, h=None, g=100: ref.Prior("established", r, g, r if h is None else h)  # noqa: E731
U = ref.Prior("unrated")


def both(priors, games, rounds, byes=()):
    """(engine, reference) new ratings, statuses, games, after checking they agree."""
    games = [(a, b, s, rnd, False) for a, b, s, rnd in games]
    diffs, eng_new, ref_new = compare(priors, games, list(byes), rounds)
    assert not diffs, diffs
    return {p: (v.rating, v.status, v.games) for p, v in eng_new.items()}, eng_new


def test_hand_result_bonus_needs_performance_strictly_above_highest():
    # A 1500 beats three 1400s, loses to a 1400, 4 rounds. Performance 1400 + 400*2/4 = 1600.
    # Sx = 4 x .64 (diff 100) = 2.56; Rn = 1500 + 32 x .44 = 1514.08; participation 4 x 1.50 = 6.
    # highest 1600: 1600 is not > 1600, no result bonus: 1520.08 -> 1520.
    # highest 1599: 75% -> +10: 1530.08 -> 1530.
    for highest, want in ((1600, 1520), (1599, 1530)):
        priors = {"A": E(1500, highest), "B": E(1400), "C": E(1400), "D": E(1400), "F": E(1400)}
        games = [("A", "B", 1, 1), ("A", "C", 1, 2), ("A", "D", 1, 3), ("A", "F", 0, 4)]
        got, _ = both(priors, games, 4)
        assert got["A"][0] == want


def test_hand_result_percent_truncates_70_83_to_70():
    # A 1500 vs B 1500 twelve times (12 rounds): A 8 W, 1 D, 3 L = 8.5 -> 850/12 = 70.83 -> 70%: +5.
    # Sx = 6, Rn = 1500 + 32 x 2.5 = 1580; participation 12 x 1.5 = 18; performance
    # 1500 + 400 x 5/12 = 1666.67 > 1500: 1580 + 18 + 5 = 1603.
    # B: 3.5, Rn = 1500 - 32 x 2.5 = 1420, + 18, performance 1333.33: no result bonus = 1438.
    scores = [1] * 8 + [0.5] + [0] * 3
    games = [("A", "B", s, i + 1) for i, s in enumerate(scores)]
    got, _ = both({"A": E(1500), "B": E(1500)}, games, 12)
    assert got["A"][0] == 1603 and got["B"][0] == 1438


def test_hand_25th_game_2199_rule_and_half_up_opponent_value():
    # P provisional 2150 after 20 games (imported, sum 43000) beats E 2150 five times: games 21-25,
    # so 714b (C7). Sx = 2.5; Rn(32) = 2230 > 2199 -> 2199 + 31/2 = 2214.5. Participation
    # 5 x .75 = 3.75; performance 2550 > 2150, 100% -> +15: 2233.25 -> 2233, established.
    # E sees P at its post-event rating before bonus, half up: 2214.5 -> 2215 (C9, C11).
    # diff 65 -> E (lower) .41 x 5 = 2.05; Rn = 2150 - 65.6 = 2084.4; + 3.75 = 2088.15 -> 2088.
    priors = {"P": ref.Prior("provisional", 2150, 20, 2150), "E": E(2150)}
    games = [("P", "E", 1, r) for r in range(1, 6)]
    got, _ = both(priors, games, 5)
    assert got["P"] == (2233, "established", 25)
    assert got["E"][0] == 2088


def test_hand_c10_and_floors_716a_716b():
    # L 700 beats H 900: L first (pre 900, diff 200, L .24): 700 + 32 x .76 = 724.32 -> 724.
    # H sees L at max(700, 724) = 724: diff 176, H .73: 900 - 23.36 = 876.64 -> 877.
    got, _ = both({"L": E(700), "H": E(900)}, [("L", "H", 1, 1)], 1)
    assert got["L"][0] == 724 and got["H"][0] == 877
    # L loses: 700 - 7.68 = 692.32 -> 692 -> 716b max(700, 692) = 700. H sees L at
    # max(700, 692) = 700: diff 200 -> .76: 900 + 7.68 = 907.68 -> 908.
    got, _ = both({"L": E(700), "H": E(900)}, [("L", "H", 0, 1)], 1)
    assert got["L"][0] == 700 and got["H"][0] == 908
    # H 810 loses to L 700. L: diff 110 -> .35: 700 + 20.8 = 720.8 -> 721. H sees L at 721:
    # diff 89 -> .62: 810 - 19.84 = 790.16 -> 790 < 800 with pre > 799 -> 716a: 799.
    got, _ = both({"L": E(700), "H": E(810)}, [("L", "H", 1, 1)], 1)
    assert got["L"][0] == 721 and got["H"][0] == 799


def test_hand_717_two_passes():
    # A 1600 beats U1 and U2; U1 beats U2. AR = 1600 - 400 x 2/2 = 1200; AR - 200 = 1000.
    # Pass 1: U1 (1600 + 1000 + 0)/2 = 1300; U2 (1600 + 1000 - 800)/2 = 900.
    # Pass 2: U1 (1600 + 900)/2 = 1250 (sum 2500); U2 (1600 + 1300 - 800)/2 = 1050 (sum 2100).
    # A: vs 1250 diff 350 -> .89, vs 1050 diff 550 -> .97: Sx 1.86; 1600 + 32 x .14 = 1604.48 -> 1604.
    priors = {"A": E(1600), "U1": U, "U2": U}
    games = [("A", "U1", 1, 1), ("U1", "U2", 1, 2), ("A", "U2", 1, 2)]
    got, new = both(priors, games, 2)
    assert got == {
        "A": (1604, "established", 102),
        "U1": (1250, "provisional", 2),
        "U2": (1050, "provisional", 2),
    }
    assert (F(new["U1"].prov_sum), F(new["U2"].prov_sum)) == (2500, 2100)


def test_hand_cumulative_sum_rounds_half_up():
    # P provisional 1500 after 1 game (sum 1500) draws E 1501: sum 3001 over 2 games = 1500.5 -> 1501
    # (half up, C11; Python's round would give 1500). E sees P at 1501: .50, draw: 1501.
    got, new = both(
        {"P": ref.Prior("provisional", 1500, 1, 1500, F(1500)), "E": E(1501)},
        [("P", "E", 0.5, 1)],
        1,
    )
    assert (
        got["P"] == (1501, "provisional", 2)
        and F(new["P"].prov_sum) == 3001
        and got["E"][0] == 1501
    )


def test_hand_new_player_with_25_games_in_first_event():
    # U beats A (1000) 25 times in 5 rounds. AR = 1000 + 400 = 1400. U: 714a, 1000 + 400 = 1400,
    # established after it (C7), no bonus. A sees U at 1400: diff 400 -> .08 x 25 = 2.00;
    # 1000 - 64 = 936; participation 25 x 2.00 = 50; performance 1000, not > 1000: 986.
    games = [("U", "A", 1, 1 + i // 5) for i in range(25)]
    got, _ = both({"U": U, "A": E(1000)}, games, 5)
    assert got["U"] == (1400, "established", 25) and got["A"][0] == 986


def test_engine_record_stays_within_the_record_schema():
    # U (unrated) beats A (4000) in the only game: 714a 4000 + 400 = 4400 (rules: correct
    # figure, no cap). The record the engine writes must decode again (it once did not, when
    # player.record/v1 capped ratings at 4000).
    _, new = engine_rate({"A": E(4000), "U": U}, [("U", "A", 1, 1, False)], [], 1)
    record = msgspec.json.decode(msgspec.json.encode(to_record("U", new["U"])), type=PlayerRecord)
    assert record.rating == 4400
