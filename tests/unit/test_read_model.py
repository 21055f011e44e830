"""The read model (service/readmodel.py) as MemoryLedger keeps it: histories follow the last
published messages through revisions, withdrawals and corrections; names fill records; the
ranking and name-index encodings sort and search as a website expects."""

from __future__ import annotations

import datetime as dt

import pytest

from schemas import PlayerRecord, decode_input
from service.engine.registry import default_registry
from service.rating import Applied, MemoryLedger, apply_message
from service.readmodel import (
    fold,
    list_key,
    matches,
    name_words,
    pack_entry,
    rank_order,
    rank_score,
    unpack_entry,
)
from service.timeline import order_key
from tests.messages import encode

REGISTRY = default_registry()


def event(
    event_id: str,
    start: str,
    end: str,
    games: list[tuple[str, str, float]],
    schema="event.finished/v1",
    names: dict | None = None,
    system="cfc",
    period: str | None = None,
) -> dict:
    ids = sorted({p for a, b, _ in games for p in (a, b)})
    message = {
        "schema": schema,
        "event_id": event_id,
        "system": system,
        "name": f"Club {event_id}",
        "start_date": start,
        "end_date": end,
        "rounds": len(games),
        "players": [{"id": p, **({"name": names[p]} if names and p in names else {})} for p in ids],
        "games": [{"round": n, "a": a, "b": b, "score": s} for n, (a, b, s) in enumerate(games, 1)],
    }
    if period:
        message["period"] = period
    return message


def process(ledger: MemoryLedger, message: dict, source: str = "s") -> Applied:
    applied = apply_message(ledger, decode_input(encode(message)), REGISTRY, source)
    assert isinstance(applied, Applied), applied
    return applied


def established(
    pid: str, rating: int, name: str | None = None, system="cfc", pool="regular"
) -> PlayerRecord:
    extra = {"highest": rating} if system == "cfc" else {"birth_year": 1990}
    return PlayerRecord(
        system=system,
        pool=pool,
        id=pid,
        rating=rating,
        status="established",
        games=100,
        name=name,
        **extra,
    )


def test_a_history_line_is_the_players_line_of_the_last_message_in_date_order():
    ledger = MemoryLedger([established("A", 1600), established("B", 1500), established("C", 1550)])
    first = process(ledger, event("e2", "2025-11-08", "2025-11-09", [("A", "C", 1)])).outputs[0]
    # e1 ends before e2: a late event, rated first in date order, and e2 revised after it.
    late = process(ledger, event("e1", "2025-11-01", "2025-11-02", [("A", "B", 0)])).outputs
    assert [o.kind for o in late] == ["event", "revision"]
    lines = ledger.history("cfc", "regular", "A")
    assert [(e.event_id, e.revision) for e in lines] == [("e1", 0), ("e2", 1)]
    a_late = next(p for p in late[1].players if p.id == "A")
    assert (lines[1].old_rating, lines[1].new_rating, lines[1].change) == (
        a_late.old_rating,
        a_late.new_rating,
        a_late.change,
    )
    assert (
        lines[1].old_rating != next(p for p in first.players if p.id == "A").old_rating
    )  # it was replaced
    assert (lines[0].name, lines[0].start_date, lines[0].end_date) == (
        "Club e1",
        dt.date(2025, 11, 1),
        dt.date(2025, 11, 2),
    )
    assert [e.event_id for e in ledger.history("cfc", "regular", "B")] == ["e1"]


def test_a_withdrawal_removes_the_lines_and_a_correction_drops_a_player_who_left():
    ledger = MemoryLedger([established("A", 1600), established("B", 1500), established("C", 1550)])
    process(ledger, event("e1", "2025-11-01", "2025-11-02", [("A", "B", 1)]))
    process(
        ledger,
        event("e1", "2025-11-01", "2025-11-02", [("A", "C", 1)], schema="event.corrected/v1"),
    )
    assert ledger.history("cfc", "regular", "B") == []  # B is no longer in e1
    assert [e.revision for e in ledger.history("cfc", "regular", "C")] == [1]
    out = process(
        ledger, {"schema": "event.withdrawn/v1", "system": "cfc", "event_id": "e1"}
    ).outputs
    assert (
        out[0].withdrawn and ledger.projection.results["e1"] == out[0]
    )  # the event's last message says so
    assert ledger.history("cfc", "regular", "A") == ledger.history("cfc", "regular", "C") == []


def test_the_events_name_for_a_player_fills_a_record_without_one_and_never_replaces_one():
    ledger = MemoryLedger([established("A", 1600, name="Ann Imported"), established("B", 1500)])
    process(
        ledger,
        event(
            "e1",
            "2025-11-01",
            "2025-11-02",
            [("A", "B", 1), ("A", "N", 0.5)],
            names={"A": "Someone Else", "B": "Bob Board", "N": "Nina New"},
        ),
    )
    assert [ledger.record("cfc", "regular", p).name for p in "ABN"] == [
        "Ann Imported",
        "Bob Board",
        "Nina New",
    ]
    # A correction re-rates from stored states (without names): the names stay.
    process(
        ledger,
        event(
            "e1",
            "2025-11-01",
            "2025-11-02",
            [("A", "B", 0), ("A", "N", 0.5)],
            schema="event.corrected/v1",
        ),
    )
    assert [ledger.record("cfc", "regular", p).name for p in "ABN"] == [
        "Ann Imported",
        "Bob Board",
        "Nina New",
    ]


def test_a_fide_list_line_comes_after_its_periods_events_and_names_the_list():
    ledger = MemoryLedger(
        [
            established("A", 2000, system="fide", pool="standard"),
            established("B", 2100, system="fide", pool="standard"),
        ]
    )
    process(
        ledger,
        event("f1", "2025-11-20", "2025-11-29", [("A", "B", 1)], system="fide", period="2025-11"),
    )
    outputs = process(
        ledger, {"schema": "period.closed/v1", "system": "fide", "period": "2025-11"}
    ).outputs
    assert (outputs[0].period, outputs[0].list_period) == ("2025-11", "2025-12")
    lines = ledger.history("fide", "standard", "A")
    assert [(e.kind, e.event_id, e.period, e.list_period) for e in lines] == [
        ("event", "f1", "2025-11", None),
        ("list", None, "2025-11", "2025-12"),
    ]
    assert lines[0].projection
    # A beats B (2100) at 2000: D -100, PD 0.36, W - We 0.64, K 20 (established, 100 games,
    # born 1990, never 2300): the projection 2000 + round(20 x 0.64) = 2000 + 13 = 2013.
    assert (lines[0].old_rating, lines[0].new_rating, lines[0].change) == (2000, 2013, 13)
    # The list's rating is the record's rating, and the record's label of that list is 2025-12.
    record = ledger.record("fide", "standard", "A")
    assert lines[1].new_rating == record.rating and record.fide.published[-1].period == "2025-12"


def test_a_list_key_sorts_after_every_event_of_its_period_and_before_the_next():
    decoded = decode_input(
        encode(
            event("f", "2025-11-30", "2025-11-30", [("A", "B", 1)], system="fide", period="2025-11")
        )
    )
    fide = REGISTRY.get("fide", "fide-2024")
    assert fide is not None
    latest = order_key(decoded, (1 << 64) - 1, fide.order_prefix(decoded))
    december = decode_input(
        encode(
            event("g", "2025-12-01", "2025-12-01", [("A", "B", 1)], system="fide", period="2025-12")
        )
    )
    assert latest < list_key("2025-11") < order_key(december, 0, fide.order_prefix(december))


def test_history_values_round_trip():
    ledger = MemoryLedger([established("A", 1600), established("B", 1500)])
    process(ledger, event("e1", "2025-11-01", "2025-11-02", [("A", "B", 1)]))
    process(ledger, event("e2", "2025-11-08", "2025-11-09", [("A", "B", 1)]))
    values = ledger.projection.entries[("cfc", "regular", "A")]
    for value in values.values():
        entry = unpack_entry(value)
        assert pack_entry(value[:17], entry) == value


def test_the_ranking_sorts_highest_first_ties_by_id_unrated_last():
    records = [
        established("b", 1500),
        established("a", 1500),
        established("c", 2400),
        established("d", -5),
        PlayerRecord(system="cfc", pool="regular", id="u"),
    ]
    assert [r.id for r in sorted(records, key=rank_order)] == ["c", "a", "b", "d", "u"]
    # The sorted set's own order (score, then member) is the same: -2400 < -1500 < 5 < 1,000,000.
    assert [rank_score(r) for r in records] == [-1500, -1500, -2400, 5, 1_000_000]


def test_names_are_searched_by_the_beginning_of_any_word_without_case_or_accents():
    assert name_words("Štoček, Jiří") == ["jiri", "stocek"]
    assert name_words("Ólafsson, Friðrik") == ["fridrik", "olafsson"]  # ð as typed: d (D50)
    record = established("123", 1500, name="Ólafsson, Friðrik")
    assert (
        matches(record, ["olaf"]) and matches(record, ["frid", "ola"]) and matches(record, ["123"])
    )
    assert matches(record, [*name_words("Frið")])  # the query is folded the same way
    assert not matches(record, ["lafsson"]) and not matches(record, ["olaf", "magnus"])


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Søndergaard, Jens", ["jens", "sondergaard"]),
        ("ØRSTED", ["orsted"]),
        ("Łukasiewicz, Dorota", ["dorota", "lukasiewicz"]),
        ("Đukić, Nikola", ["dukic", "nikola"]),
        ("Ærenlund", ["aerenlund"]),
        ("Œhlenschläger", ["oehlenschlager"]),
        ("Großmann; GROẞ", ["gross", "grossmann"]),
        ("Þórhallsson", ["thorhallsson"]),
        ("Yıldız, İlkay", ["ilkay", "yildiz"]),
        ("Paŀlàs", ["pallas"]),  # ŀ decomposes to l and a middle dot: one word still
        ("Ǿrnberg", ["ornberg"]),  # ǿ decomposes to ø and an accent
        ("Məmmədyarov", ["mammadyarov"]),
        ("Ħabib Ƶ", ["habib", "z"]),  # any Latin letter "with stroke" by its name
    ],
)
def test_letters_without_a_decomposition_fold_as_readers_type_them(name, words):
    assert name_words(name) == words
    assert all(fold(w) == w and w.isascii() for w in words)


def test_a_pages_ranks_share_equal_ratings_across_the_page_boundary():
    from service.runtime.queries import _page_ranks

    # The list 2400, 2300, 2300, 2300, 2100, unrated; the page from position 3 (offset 2):
    # 2300 (2 players above: rank 2, as the 2300 on page one), 2300 (rank 2), 2100 (4 above:
    # rank 5), unrated (no rank).
    assert _page_ranks([-2300, -2300, -2100, 1_000_000], offset=2, above=1) == [2, 2, 5, None]
    assert _page_ranks([-2400, -2300], offset=0, above=0) == [1, 2]
    assert _page_ranks([], offset=0, above=0) == []
