"""The event's crosstable and revisions (D42, D43) worked by hand, their API routes, the
labels the details Structs carry (D44), and the event page with every figure checked
against the API (D37: tests/figures.py)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

import msgspec
import pytest
from openapi_schema_validator import OAS31Validator

from schemas.cfc import CfcDetails
from schemas.events import EventFinished
from schemas.fide import FideDetails
from schemas.naspa import NaspaDetails
from schemas.ratings import Cause, PlayerResult, RatingsUpdated
from schemas.reads import Crosstable, EventRevisions
from service.compact import expand
from service.crosstable import crosstable
from service.revisions import revisions
from service.timeline import Archived, Note, arrival_of, encode_archived, order_key
from service.web.pages import figures
from tests.figures import check_page
from tests.unit.test_web import accessible, app_of, get


@pytest.fixture(scope="module")
def app():
    return app_of()


def club_night() -> EventFinished:
    """Four players, three rounds: a forfeit in round 2, a bye and an absence in round 3."""
    return msgspec.convert(
        {
            "event_id": "club-night",
            "system": "cfc",
            "pool": "regular",
            "name": "Club night",
            "start_date": "2025-11-04",
            "end_date": "2025-11-04",
            "rounds": 3,
            "players": [{"id": "a"}, {"id": "b"}, {"id": "c", "name": "Cleo"}, {"id": "d"}],
            "games": [
                {"round": 1, "a": "a", "b": "b", "score": 1},
                {"round": 1, "a": "c", "b": "d", "score": 0.5},
                {"round": 2, "a": "a", "b": "c", "score": 0.5},
                {"round": 2, "a": "b", "b": "d", "score": 1, "forfeit": True},
                {"round": 3, "a": "a", "b": "d", "score": 0},
            ],
            "byes": [{"round": 3, "player": "c", "score": 1}],
        },
        EventFinished,
    )


def result(pid: str, old: int | None, new: int | None, score: float, **more) -> PlayerResult:
    return PlayerResult(
        id=pid,
        old_rating=old,
        new_rating=new,
        change=new - old if new is not None and old is not None else None,
        old_status="established" if old is not None else "unrated",
        status="established" if new is not None else "unrated",
        games=30,
        event_games=2,
        score=score,
        **more,
    )


def message(players: list[PlayerResult], **more) -> RatingsUpdated:
    fields = dict(
        kind="event",
        system="cfc",
        pool="regular",
        ruleset="cfc-2009",
        source_id="1764500000000-2",
        event_id="club-night",
        name="Club night",
        players=players,
    )
    fields.update(more)
    return RatingsUpdated(**fields)  # type: ignore[arg-type]


KEY = order_key(club_night(), arrival_of("1764500000000-2"), 0)


def test_the_crosstable_by_hand():
    """Points: a 1 + 0.5 + 0 = 1.5; b 0 + 1 (forfeit) = 1; c 0.5 + 0.5 + 1 (bye) = 2;
    d 0.5 + 0 (forfeit) + 1 = 1.5. Order: c; a and d at 1.5, a rated 1600 before d unrated;
    b. Numbers c 1, a 2, d 3, b 4; ranks 1, 2, 2, 4."""
    sent = message(
        [
            result("a", 1600, 1590, 1.5, performance=1525.5),
            result("b", 1500, 1480, 0.0),
            result("c", 1400, 1430, 1.0, name="Cleo"),
            result("d", None, None, 1.0),
        ]
    )
    table = crosstable(sent, Archived(KEY, club_night()))
    assert (table.rounds, table.archived, table.revision) == (3, True, 0)
    rows = [(p.number, p.rank, p.id, p.points, p.rating) for p in table.players]
    assert rows == [
        (1, 1, "c", 2.0, 1400),
        (2, 2, "a", 1.5, 1600),
        (3, 2, "d", 1.5, None),
        (4, 4, "b", 1.0, 1500),
    ]
    c, a, d, b = table.players
    cells = {
        p.id: [(r.round, r.kind, r.opponent, r.score, r.running) for r in p.results]
        for p in table.players
    }
    assert cells == {
        "c": [(1, "game", 3, 0.5, 0.5), (2, "game", 2, 0.5, 1.0), (3, "bye", None, 1.0, 2.0)],
        "a": [(1, "game", 4, 1.0, 1.0), (2, "game", 1, 0.5, 1.5), (3, "game", 3, 0.0, 1.5)],
        "d": [(1, "game", 1, 0.5, 0.5), (2, "forfeit", 4, 0.0, 0.5), (3, "game", 2, 1.0, 1.5)],
        "b": [(1, "game", 2, 0.0, 0.0), (2, "forfeit", 3, 1.0, 1.0)],  # absent in round 3
    }
    assert (c.name, a.name, a.new_rating, a.change, a.performance) == (
        "Cleo",
        None,
        1590,
        -10,
        1525.5,
    )
    assert (a.score, b.score) == (1.5, 0.0)  # the rated score: no forfeit, no bye
    assert not a.projection and d.change is None


def test_an_open_fide_period_shows_the_projection_and_the_rating_used():
    """FIDE F9: the message keeps 2412 -> 2412; the table shows 2407, -5, projected, from
    the list in force at the start (`rating_used`)."""
    details = FideDetails(
        period="2025-11",
        k=10,
        event_change=-4.9,
        projected_rating=2407,
        games_counted=3,
        projection=True,
        rating_used=2412,
    )
    sent = message(
        [result("a", 2412, 2412, 1.5, details=details)],
        system="fide",
        pool="standard",
        ruleset="fide-2024",
    )
    [row] = crosstable(sent, None).players
    assert (row.rating, row.new_rating, row.change, row.projection) == (2412, 2407, -5, True)
    assert row.results == [] and row.points == 0


def test_revisions_from_the_log():
    """Rated by entry 1764500000000-2 (2025-11-30 10:53:20 UTC); corrected by
    1764600000000-0 with its reason; re-rated when late-event was inserted
    (1764700000000-5)."""
    log = (
        Note(1, 0, arrival_of("1764600000000-0"), "", "round 2 was a draw"),
        Note(2, 2, arrival_of("1764700000000-5"), "late-event"),
    )
    last = message(
        [],
        kind="revision",
        revision=2,
        cause=Cause(type="inserted", event_id="late-event"),
        source_id="1764700000000-5",
    )
    found = revisions(last, Archived(KEY, club_night(), 2, b"", False, log))
    assert (found.revision, found.withdrawn) == (2, False)
    lines = [(r.revision, r.kind, r.source_id, r.reason, r.known) for r in found.revisions]
    assert lines == [
        (0, "rated", "1764500000000-2", None, True),
        (1, "corrected", "1764600000000-0", "round 2 was a draw", True),
        (2, "rerated", "1764700000000-5", None, True),
    ]
    assert found.revisions[0].at == dt.datetime(2025, 11, 30, 10, 53, 20, tzinfo=dt.UTC)
    assert found.revisions[1].cause == Cause(type="corrected", event_id="club-night")
    assert found.revisions[2].cause == Cause(type="inserted", event_id="late-event")


def test_revisions_before_the_log_are_numbered_and_the_last_told_by_its_message():
    """An archive of revision 2 without a log (written before D43): revision 1 is unknown,
    revision 2 is the last message's (withdrawn by 1764700000000-5)."""
    last = message(
        [],
        kind="revision",
        revision=2,
        cause=Cause(type="withdrawn", event_id="club-night"),
        source_id="1764700000000-5",
        withdrawn=True,
    )
    found = revisions(last, Archived(KEY, club_night(), 2, b"", True))
    assert [(r.revision, r.kind, r.known) for r in found.revisions] == [
        (0, "rated", True),
        (1, "unknown", False),
        (2, "withdrawn", True),
    ]
    assert found.withdrawn and found.revisions[2].source_id == "1764700000000-5"


def test_a_note_is_a_few_bytes():
    """D43's size: 14 bytes for an own correction without a reason (the array's header, the
    revision, the cause, a uint64 arrival, two empty strings: msgspec writes an array_like
    Struct's defaults), plus the other event's id or the reason; an archive without
    revisions carries an empty log, 1 byte (before the archive is kept compact: D100)."""
    arrival = arrival_of("1764600000000-0")
    assert len(msgspec.msgpack.encode(Note(1, 0, arrival))) == 14
    assert len(msgspec.msgpack.encode(Note(2, 2, arrival, "late-event"))) == 14 + 10
    event = club_night()
    assert (
        len(expand(encode_archived(Archived(KEY, event))))
        == len(expand(encode_archived(Archived(KEY, event, 1, b"", False, (Note(1, 0, arrival),)))))
        - 14
    )


# ---------------------------------------------------------------- labels (D44)


def struct_types(kind: type) -> list[type]:
    """A Struct and every Struct its fields hold (lists and unions included)."""
    found: list[type] = []

    def walk(info) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in found:
                return
            found.append(info.cls)
            for f in info.fields:
                walk(f.type)
        for attr in ("type", "item_type"):
            if hasattr(info, attr):
                walk(getattr(info, attr))
        for inner in getattr(info, "types", ()):
            walk(inner)

    walk(msgspec.inspect.type_info(kind))
    return found


@pytest.mark.parametrize("details", [CfcDetails, FideDetails, NaspaDetails])
def test_every_details_field_has_a_label_in_its_schema(details):
    for kind in struct_types(details):
        for f in msgspec.inspect.type_info(kind).fields:
            assert isinstance(f.type, msgspec.inspect.Metadata), (kind.__name__, f.name)
            assert f.type.extra_json_schema.get("title"), (kind.__name__, f.name)


class Game(msgspec.Struct):
    round: Annotated[int, msgspec.Meta(title="Round")]
    gain: Annotated[float, msgspec.Meta(title="Gain")]
    gain_exact: Annotated[str, msgspec.Meta(title="Gain, exact")]


class Fifth(msgspec.Struct, tag_field="system", tag="fifth"):
    """A fifth system's details: the page knows nothing of it but its schema."""

    volatility: Annotated[float, msgspec.Meta(title="Volatility σ")]
    games: Annotated[list[Game], msgspec.Meta(title="Games")]
    note_code: str = "x"


def test_a_fifth_system_gets_its_labels_from_its_schema_alone():
    panel = figures(Fifth(0.0600012, [Game(1, 2.4, "12/5")]), "players.0.details", "fifth", "p", {})
    assert [label for label, _ in panel.scalars] == ["Volatility σ", "Note code"]
    assert 'data-f="players.0.details.volatility">0.06</data>' in panel.scalars[0][1]
    [(label, columns, rows)] = panel.tables
    assert (label, columns) == ("Games", [("Round", True), ("Gain", True)])
    gain = rows[0][1][0]
    assert gain == '<data value="12/5" data-f="players.0.details.games.0.gain_exact">2.4</data>'


# ---------------------------------------------------------------- the API routes


async def test_the_crosstable_and_revisions_routes_with_their_validators(app):
    spec = (await get(app, "/openapi.json")).json()
    for path, name in [
        ("/v1/events/{event_id}/crosstable", "Crosstable"),
        ("/v1/events/{event_id}/revisions", "EventRevisions"),
    ]:
        responses = spec["paths"][path]["get"]["responses"]
        assert responses["200"]["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{name}"
        }
        assert "404" in responses and "422" not in responses
    for path, kind in [
        ("/v1/events/montreal-international-2025/crosstable", Crosstable),
        ("/v1/events/montreal-international-2025/revisions", EventRevisions),
    ]:
        answer = await get(app, path)
        found = msgspec.json.decode(answer.content, type=kind, strict=True)
        schema = {"$ref": f"#/components/schemas/{kind.__name__}", "components": spec["components"]}
        OAS31Validator(schema).validate(answer.json())
        assert answer.headers["last-modified"] == "Mon, 01 Dec 2025 09:30:00 GMT"
        again = await get(app, path, **{"If-None-Match": answer.headers["etag"]})
        assert (again.status_code, again.content) == (304, b"")
        assert found.event_id == "montreal-international-2025"
    missing = await get(app, "/v1/events/nope/crosstable")
    assert missing.status_code == 404 and missing.json() == {
        "error": "not_found",
        "message": "no event 'nope'",
    }
    assert (await get(app, "/v1/events/no%20pe/revisions")).status_code == 400


# ---------------------------------------------------------------- the page


async def checked(app, path: str) -> str:
    """The page, after tests/figures.py found every figure equal to its API field."""
    page = (await get(app, path)).text
    documents = {
        api: (await get(app, api)).json() for api in set(re.findall(r'data-api="([^"]+)"', page))
    }
    count, problems = check_page(page, documents.__getitem__)
    assert problems == [] and count > 100, (count, problems)
    assert len(page.encode()) < 100_000
    accessible(page)
    return page


@pytest.mark.parametrize(
    "event_id",
    ["ottawa-fall-open-2025", "montreal-international-2025", "toronto-scrabble-club-2025-11-20"],
)
async def test_every_figure_of_the_event_page_is_its_api_field(app, event_id):
    page = await checked(app, f"/events/{event_id}?games=true")
    assert '<h2 id="crosstable">Crosstable</h2>' in page and 'id="revisions"' in page


async def test_the_fide_page_shows_the_projection_as_the_player_page_does(app):
    page = await checked(app, "/events/montreal-international-2025?games=true")
    assert (
        'data-f="players.0.rating">2412</data> → <data value="2407" '
        'data-f="players.0.new_rating">2407</data> <span class="note">(projected)</span>'
    ) in page
    assert 'data-f="players.0.change">\u22125</data> <span class="note">(projected)</span>' in page
    # K x the event's sum, -4.9: the decimal, its exact value in the figure's value (D44).
    assert (
        '<dt data-text>Event&#39;s change (K × sum)</dt><dd><data value="-49/10" '
        'data-f="players.0.details.event_change_exact">\u22124.9</data></dd>'
    ) in page
    shown = re.sub(r"<[^>]+>", " ", page)  # the text people read: no raw field names
    assert not [name for name in ("event_change", "rating_used", "games_counted") if name in shown]
    assert "Rating used" in shown and "Games counted" in shown


async def test_the_cfc_crosstable_marks_byes(app):
    page = await checked(app, "/events/ottawa-fall-open-2025")
    assert "bye&nbsp;<strong><data" in page
    assert '<th scope="col" class="num" data-text><abbr title="Round 4">R4</abbr></th>' in page
    assert "Rated" in page  # revision 0 in the history


def test_the_use_case_notes_each_revision_with_its_own_entry():
    """Through apply_message: the correction's note has the correction's arrival (not the
    event's, which its order key keeps) and its reason; the withdrawal's, its own."""
    from schemas.records import PlayerRecord
    from schemas.validation import decode_input
    from service.engine.registry import default_registry
    from service.rating import MemoryLedger, apply_message

    ledger = MemoryLedger(
        [
            PlayerRecord(
                system="cfc", pool="regular", id=pid, rating=r, status="established", games=40
            )
            for pid, r in (("a", 1600), ("b", 1500), ("c", 1400), ("d", 1300))
        ]
    )
    first = msgspec.to_builtins(club_night())
    fixed = dict(first, schema="event.corrected/v1", reason="sheet misread")
    fixed["games"] = [
        dict(g, score=0) if g["round"] == 1 and g["a"] == "a" else g for g in first["games"]
    ]
    entries = [
        (dict(first, schema="event.finished/v1"), "1764500000000-2"),
        (fixed, "1764600000000-0"),
        (
            {"schema": "event.withdrawn/v1", "system": "cfc", "event_id": "club-night"},
            "1764700000000-1",
        ),
    ]
    for body, entry in entries:
        message = decode_input(msgspec.json.encode(body))
        apply_message(ledger, message, default_registry(), entry, arrival_of(entry))
    archived = ledger.archives["club-night"]
    assert archived.log == (
        Note(1, 0, arrival_of("1764600000000-0"), "", "sheet misread"),
        Note(2, 1, arrival_of("1764700000000-1")),
    )
    assert int.from_bytes(archived.key[9:], "big") == arrival_of("1764500000000-2")
