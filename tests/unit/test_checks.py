"""The rules of the look before appending (service/cli/checks.py): names folded for accents,
case and order; the share of unknown players that is refused; names and ratings compared
with the records; the closest ids of a mistyped one."""

from __future__ import annotations

import pytest

from schemas.records import PlayerRecord
from schemas.validation import decode_input
from service.cli.checks import (
    Options,
    closest_ids,
    event_findings,
    name_key,
    same_name,
    unknown_event,
)
from tests.messages import encode, event


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("Lapointe, Luc", "luc lapointe"),
        ("Lapointe,Luc", "Luc LAPOINTE"),
        ("Ólafsson, Helgi", "Helgi Olafsson"),
        ("Dupont-Aignan, Jean", "jean dupont aignan"),
        ("  Tremblay ,  Anne ", "Anne Tremblay"),
        ("Straße, Jörg", "Jorg STRASSE"),
    ],
)
def test_names_that_are_the_same(given, recorded):
    assert same_name(given, recorded)


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("Lapointe, Luc", "Anne Tremblay"),
        ("Lapointe, Luc", "Lapointe, Lucie"),
        ("Lapointe, Luc", "Lapointe"),
        ("Li, Li", "Li"),  # the words counted, not only which
    ],
)
def test_names_that_differ(given, recorded):
    assert not same_name(given, recorded)


def test_name_key_is_the_folded_words_in_order():
    assert name_key("Ólafsson, Helgi") == ("helgi", "olafsson")
    assert name_key("") == ()


def record(pid: str, name: str | None = None, rating: int | None = 1600) -> PlayerRecord:
    return PlayerRecord(
        system="cfc",
        pool="regular",
        id=pid,
        name=name,
        rating=rating,
        status="established" if rating else "unrated",
        games=30 if rating else 0,
        highest=rating,
    )


def three(**names):
    """The test event of three players (p1 'Ann'), with names given by id."""
    players = [
        {"id": pid, **({"name": names[pid]} if pid in names else {})} for pid in ("p1", "p2", "p3")
    ]
    return decode_input(encode(event(players=players)))


def test_more_than_half_unknown_is_refused_unless_new_players():
    message = three()
    found = event_findings(message, {"p1": record("p1")}, Options())
    assert found.refusals == [
        "club-2025-11-a: 2 of 3 players have no record in cfc/regular: import the list first?"
        " (--new-players rates them as new players)"
    ]
    found = event_findings(message, {"p1": record("p1")}, Options(new_players=True))
    assert found.refusals == []
    assert found.warnings == [
        "note: club-2025-11-a: 2 of 3 players have no record in cfc/regular, rated as new players: p2, p3"
    ]


def test_half_unknown_or_fewer_is_only_said():
    message = three()
    found = event_findings(message, {"p1": record("p1"), "p2": record("p2")}, Options())
    assert (found.refusals, len(found.warnings)) == ([], 1)
    found = event_findings(message, {}, Options(), earlier={"p1", "p2"})  # rated just before
    assert (found.refusals, len(found.warnings)) == ([], 1)
    every = {pid: record(pid) for pid in ("p1", "p2", "p3")}
    assert event_findings(message, every, Options()).warnings == []


def test_a_name_not_the_records_is_refused_unless_accepted():
    message = three(p1="Tremblay, Anne", p2="Bravo, Boris")
    records = {
        "p1": record("p1", "Lapointe, Luc"),
        "p2": record("p2", "boris bravo"),
        "p3": record("p3"),
    }
    found = event_findings(message, records, Options())
    assert found.refusals == [
        "club-2025-11-a: 1 name differs from the record with the same id: p1 is 'Lapointe, Luc'"
        " in the store, 'Tremblay, Anne' in the event (a wrong id? --accept-names rates them anyway)"
    ]
    found = event_findings(message, records, Options(accept_names=True))
    assert found.refusals == [] and "(accepted)" in found.warnings[0]
    records["p1"] = record("p1")  # no name in the store: nothing to compare
    assert event_findings(message, records, Options()).refusals == []


def test_a_files_rating_not_the_stores_is_said():
    message = three()
    records = {"p1": record("p1", rating=1600), "p2": record("p2", rating=None), "p3": record("p3")}
    found = event_findings(message, records, Options(), given={"p1": 1650, "p2": 1500, "p3": None})
    assert found.warnings == [
        "warning: club-2025-11-a: p1 is 1650 in the file, 1600 in cfc/regular (the service rates from the store)",
        "warning: club-2025-11-a: p2 is 1500 in the file, unrated in cfc/regular (the service rates from the store)",
    ]


def test_the_closest_ids_of_a_mistyped_one():
    known = ["autumn-open-2025", "spring-open-2025", "autumn-open-2024", "club-night-7"]
    assert closest_ids("autum-open-2025", known) == [
        "autumn-open-2025",
        "autumn-open-2024",
        "spring-open-2025",
    ]  # at most three, the nearest first
    assert closest_ids("zzz", known) == []
    assert unknown_event("autum-open-2025", "events.finished", known[:2]) == (
        "event 'autum-open-2025' is not a rated event of stream events.finished: did you mean "
        "autumn-open-2025 or spring-open-2025?"
    )
    assert unknown_event("zzz", "events.finished", known).endswith("of stream events.finished")
