"""The pieces of `--wait` and `rejected` that need no Redis: matching outcomes to entries,
the reports, ages, redrive states, and the settings the command line checks."""

from __future__ import annotations

import argparse
import datetime as dt

import msgspec
import pytest

from schemas.ratings import Cause, PlayerResult, RatingsUpdated
from schemas.rejected import EventRejected
from service.cli.errors import UserError
from service.cli.rejected import format_age, parse_age
from service.cli.wait import Label, Tracker, label_of, own_first, report, wants_wait
from service.cli.watch import render, render_rejection
from service.runtime.deadletters import original_data, states
from service.runtime.settings import SettingsError, check_redis_url, load_settings

STREAM = "events.finished"


def result(
    source_id: str, event_id: str, kind: str = "event", cause: Cause | None = None
) -> RatingsUpdated:
    player = PlayerResult(
        id="p1",
        old_rating=1500,
        new_rating=1512,
        change=12,
        old_status="established",
        status="established",
        games=40,
        event_games=3,
        score=2.0,
    )
    return RatingsUpdated(
        kind=kind,
        system="cfc",
        pool="regular",
        ruleset="cfc-2009",
        source_id=source_id,
        players=[player],
        event_id=event_id,
        cause=cause,
        revision=1 if kind == "revision" else None,
    )


def letter(source_id: str, stream: str = STREAM, reason: str = "conflict") -> EventRejected:
    return EventRejected(
        reason=reason,
        message="event:e1 was already applied with other content",
        path="$",
        source_stream=stream,
        source_id=source_id,
        event_id="e1",
        fields={"__data__": '{"event_id": "e1"}'},
    )


def test_an_entry_waits_until_the_cursor_reaches_it():
    tracker = Tracker(STREAM, [("5-0", Label("e1", "e1")), ("7-0", Label("e2", "e2"))])
    tracker.output(result("5-0", "e1"))  # its message may be read before the cursor
    tracker.cursor("4-9")
    assert [o.state for o in tracker.outcomes.values()] == ["waiting", "waiting"]
    tracker.cursor("6-0")
    assert [o.state for o in tracker.outcomes.values()] == ["rated", "waiting"]
    assert not tracker.done and tracker.exit_code() == 3
    tracker.cursor("7-0")  # passed with nothing written for it: a duplicate
    assert tracker.outcomes["7-0"].state == "duplicate"
    assert tracker.done and tracker.exit_code() == 0


def test_a_rejection_counts_only_from_the_entry_stream():
    tracker = Tracker(STREAM, [("5-0", Label("e1", "e1"))])
    tracker.dead_letter(
        "9-0", letter("5-0", stream="other.events")
    )  # same id, another input stream
    tracker.output(result("6-0", "e9"))  # someone else's output
    tracker.cursor("5-0")
    assert tracker.outcomes["5-0"].state == "duplicate"
    tracker.dead_letter("9-1", letter("5-0"))
    assert tracker.outcomes["5-0"].state == "rejected" and tracker.exit_code() == 1


def test_rejected_wins_over_timeout_in_the_exit_code():
    tracker = Tracker(STREAM, [("5-0", Label("e1", "e1")), ("6-0", Label("e2", "e2"))])
    tracker.dead_letter("9-0", letter("5-0"))
    tracker.cursor("5-0")
    assert tracker.exit_code() == 1


def test_own_result_first_then_the_revisions():
    tracker = Tracker(STREAM, [("5-0", Label("e1", "e1"))])
    later = result("5-0", "e0", "revision", Cause(type="corrected", event_id="e1"))
    own = result("5-0", "e1", "revision", Cause(type="corrected", event_id="e1"))
    tracker.output(later)  # the stream order may put a later event first
    tracker.output(own)
    tracker.cursor("5-0")
    outcome = tracker.outcomes["5-0"]
    assert own_first(outcome) == ([own], [later])
    text = report(outcome, 30)
    assert text.startswith("5-0  e1: re-rated\n")
    assert (
        text.index("e1  REVISION 1")
        < text.index("... and 1 later event re-rated:")
        < text.index("e0  REVISION 1")
    )


def test_reports_of_a_rejection_a_duplicate_and_a_timeout():
    tracker = Tracker(
        STREAM, [("5-0", Label("e1", "e1")), ("6-0", Label("e2", "e2")), ("7-0", Label("e3", "e3"))]
    )
    tracker.dead_letter("9-0", letter("5-0"))
    tracker.cursor("6-0")
    rejected, duplicate, waiting = (report(o, 2.5) for o in tracker.outcomes.values())
    assert rejected.splitlines()[:3] == [
        "5-0  e1: REJECTED (conflict), dead letter 9-0",
        "  at   $",
        "  why  event:e1 was already applied with other content",
    ]
    assert "rating-service rejected redrive 9-0 --file FIXED.json" in rejected
    assert duplicate == "6-0  e2: duplicate: already applied with this content, nothing changed"
    assert waiting == "7-0  e3: no outcome within 2.5 s (not applied yet)"


def test_labels_of_messages():
    assert label_of(
        b'{"schema": "event.withdrawn/v1", "event_id": "e7", "system": "cfc"}'
    ) == Label("e7", "e7")
    assert label_of(
        b'{"schema": "period.closed/v1", "system": "fide", "pool": "standard", "period": "2025-11"}'
    ) == Label("period fide/standard 2025-11")
    withdrawal = (
        b'{"schema": "event.withdrawn/v1", "event_id": "e7", "system": "cfc", "reason": "typo"}'
    )
    assert label_of(withdrawal) == Label("e7", "e7", "typo")


def test_the_reason_given_is_echoed_under_the_heading():
    label = Label("e1", "e1", "round 3 entered the wrong way round")
    tracker = Tracker(STREAM, [("5-0", label), ("6-0", Label("e2", "e2", "duplicate file"))])
    own = result("5-0", "e1", "revision", Cause(type="corrected", event_id="e1"))
    tracker.output(own)
    tracker.cursor("6-0")
    rated, duplicate = (report(o, 30).splitlines()[:2] for o in tracker.outcomes.values())
    assert rated == ["5-0  e1: re-rated", "  reason given: round 3 entered the wrong way round"]
    assert duplicate[1] == "  reason given: duplicate file"


def test_tables_name_the_players_next_to_their_ids():
    named = msgspec.structs.replace(
        result("5-0", "e1"),
        name="Club night",
        start_date=dt.date(2025, 11, 4),
        end_date=dt.date(2025, 11, 4),
    )
    named = msgspec.structs.replace(
        named, players=[msgspec.structs.replace(named.players[0], name="Anne Tremblay")]
    )
    lines = render(named).splitlines()
    assert lines[1] == "  Club night  2025-11-04"
    assert lines[2].split() == [
        "player",
        "name",
        "old",
        "new",
        "change",
        "status",
        "games",
        "event",
        "score",
    ]
    assert lines[3].split()[:3] == ["p1", "Anne", "Tremblay"]
    gone = msgspec.structs.replace(
        named, kind="revision", revision=1, players=[], cause=Cause(type="corrected", event_id="e1")
    )
    last = render(gone, previous=named).splitlines()[-1]
    assert last.split()[:3] == ["p1", "Anne", "Tremblay"]
    assert last.endswith("no longer in this result")


def test_waiting_is_the_default_at_a_terminal_only(monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert wants_wait(argparse.Namespace(wait=None))
    assert not wants_wait(argparse.Namespace(wait=False))
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert not wants_wait(argparse.Namespace(wait=None))
    assert wants_wait(argparse.Namespace(wait=True))


def test_a_dead_letter_as_watch_shows_it():
    assert render_rejection(letter("5-0"), "9-0").splitlines() == [
        "e1  REJECTED: conflict  dead letter 9-0",
        "  at     $",
        "  why    event:e1 was already applied with other content",
        "  entry  5-0 of events.finished",
    ]


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("45s", 45),
        ("90m", 5400),
        ("12h", 43200),
        ("30d", 2592000),
        ("2w", 1209600),
        ("1d12h", 129600),
        (" 3H ", 10800),
    ],
)
def test_ages(text, seconds):
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "3 days", "-1d", "1.5h"])
def test_bad_ages(text):
    with pytest.raises(UserError, match="an age is a number and a unit"):
        parse_age(text)


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0, "0s"),
        (59.9, "59s"),
        (60, "1m"),
        (3599, "59m"),
        (3600 + 5 * 60, "1h 05m"),
        (2 * 86400 + 4 * 3600 + 59, "2d 04h"),
        (-3, "0s"),
    ],
)
def test_format_age(seconds, text):
    assert format_age(seconds) == text


def test_redrive_states():
    letters = [("9-0", letter("5-0")), ("9-1", letter("8-0")), ("9-2", None)]
    assert states(letters, {"9-0": "8-0", "9-2": "8-5"}) == {
        "9-0": "redriven as 8-0, rejected again: 9-1",  # its new entry 8-0 was rejected as 9-1
        "9-1": "open",
        "9-2": "redriven as 8-5",
    }


def test_original_data_text_or_base64():
    assert original_data(letter("5-0")) == b'{"event_id": "e1"}'
    binary = EventRejected(
        reason="malformed",
        message="not UTF-8",
        source_stream=STREAM,
        source_id="5-0",
        fields_base64={"__data__": "/w=="},
    )
    assert original_data(binary) == b"\xff"
    assert (
        original_data(
            EventRejected(
                reason="malformed", message="no data", source_stream=STREAM, source_id="5-0"
            )
        )
        is None
    )


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/0",
        "rediss://user:pw@host:6380/1",
        "unix:///tmp/r.sock",
    ],
)
def test_redis_urls_with_a_scheme(url):
    assert check_redis_url(url) == url


def test_a_redis_url_with_its_scheme_in_capitals_is_refused():
    # redis-py reads only lower-case schemes: `REDIS://h:1` failed at the first command (D80).
    with pytest.raises(ValueError, match="the scheme is redis://, in lower case"):
        check_redis_url("REDIS://h:1")


@pytest.mark.parametrize("url", ["127.0.0.1:6379", "localhost", "http://h:6379", "redis:/h"])
def test_redis_urls_without_one(url):
    with pytest.raises(ValueError, match="not a Redis URL"):
        check_redis_url(url)


def test_settings_refuse_a_bad_log_level_and_url_and_normalise_the_level():
    assert load_settings({"RATING_LOG_LEVEL": "debug"}).log_level == "DEBUG"
    with pytest.raises(SettingsError, match="RATING_LOG_LEVEL='LOUD': not a log level"):
        load_settings({"RATING_LOG_LEVEL": "LOUD"})
    with pytest.raises(SettingsError, match="REDIS_URL='127.0.0.1:6379': not a Redis URL"):
        load_settings({"REDIS_URL": "127.0.0.1:6379"})
    with pytest.raises(SettingsError, match="redis_url '127.0.0.1:6379': not a Redis URL"):
        load_settings({}, redis_url="127.0.0.1:6379")


def test_the_lease_time_is_a_positive_number_of_milliseconds():
    assert load_settings({}).lease_ms == 10_000
    assert load_settings({"RATING_LEASE_MS": "2500"}).lease_ms == 2500
    for bad in ("0", "-1", "ten"):
        with pytest.raises(SettingsError, match="RATING_LEASE_MS"):
            load_settings({"RATING_LEASE_MS": bad})


def test_a_table_without_any_name_has_no_name_column_and_takes_the_names_known():
    message = result("5-0", "e1")  # no name anywhere: a list message, or a bare producer's
    assert render(message).splitlines()[1].split()[:2] == ["player", "old"]
    named = render(message, known={"p1": "Anne Tremblay"}).splitlines()
    assert named[1].split()[:2] == ["player", "name"] and "Anne Tremblay" in named[2]
