"""Plausible dates through the command line and the service, against a real Redis (issue
29; docs/design/decisions.md "D14 Plausible dates"): the TRF whose end date has a year typo
(`052 2052/12/09`) is refused by `validate` and by `publish` (nothing appended), and, sent
raw by XADD, dead-lettered `implausible` by the service; `validate` lists every problem of
a file in one run. The commands' clock is fixed here (TODAY), except in the one test that
shows the service reads the real one."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import msgspec
import pytest

from service.cli import data, offline
from service.cli.main import main
from service.cli.trffile import trf_event
from service.engine.registry import default_registry
from service.runtime.processor import StreamProcessor
from tests.integration.helpers import outputs, publish, rejections, settings_for

pytestmark = pytest.mark.integration

TYPO = Path(__file__).resolve().parents[1] / "data" / "winter-open-2052-typo.trf"
TODAY = dt.date(2025, 12, 10)


@pytest.fixture
def fixed_clock(monkeypatch):
    """The commands' clock reads TODAY."""
    monkeypatch.setattr(data, "utc_today", lambda: TODAY)
    monkeypatch.setattr(offline, "utc_today", lambda: TODAY)


async def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def typo_event() -> bytes:
    """The TRF converted without a clock (as `convert` does), to be sent raw."""
    parser_args = type("Args", (), {"event_id": None})()
    return trf_event(str(TYPO), parser_args).raw


async def test_the_2052_typo_is_refused_by_validate_and_publish(
    redis_url, key_prefix, client, capsys, fixed_clock
):
    code, out, _ = await cli(capsys, "validate", str(TYPO))
    assert code == 1
    assert out.splitlines() == [
        f"{TYPO}:5: the converted event: $.end_date: end_date 2052-12-09 is in the future (today is "
        "2025-12-10 UTC): a finished event has ended (a typo in the year?) (implausible)",
        f"{TYPO}:5: the converted event: $.end_date: the event lasts 9870 days from start_date 2025-12-01 to "
        "end_date 2052-12-09, over the limit of 90; a league is sent with long_event: true (--long-event "
        "for a TRF), up to 366 days (implausible)",
    ]
    stream = f"{key_prefix}.events"
    await client.xadd(stream, {"__data__": b"{}"})  # the stream exists, with one entry
    code, out, err = await cli(
        capsys, "publish", str(TYPO), "--stream", stream, "--redis-url", redis_url
    )
    assert (code, out) == (2, "")
    assert err == (
        f"rating-service publish: {TYPO}:5: the converted event: $.end_date: end_date 2052-12-09 is in the "
        "future (today is 2025-12-10 UTC): a finished event has ended (a typo in the year?) (implausible)\n"
    )
    assert await client.xlen(stream) == 1  # nothing appended


async def test_a_correction_and_a_close_are_checked_by_the_clock_too(
    tmp_path, redis_url, key_prefix, client, capsys, fixed_clock
):
    stream = f"{key_prefix}.events"
    common = ["--stream", stream, "--redis-url", redis_url]
    code, _, err = await cli(capsys, "correct", str(TYPO), "--reason", "typo", *common)
    assert code == 2 and err.endswith("(a typo in the year?) (implausible)\n")
    code, _, err = await cli(capsys, "close-period", "fide", "standard", "2025-12", *common)
    assert code == 2
    assert err == (
        "rating-service close-period: close-period: $.period: period 2025-12 is not over yet (it ends on "
        "2025-12-31; today is 2025-12-10 UTC) (implausible)\n"
    )
    assert await client.exists(stream) == 0  # nothing appended
    # A league: --long-event lets the span through (the end date must still be in the past).
    league = tmp_path / "league.trf"
    league.write_text(TYPO.read_text().replace("052 2052/12/09", "052 2026/06/01"))
    code, out, _ = await cli(capsys, "validate", str(league), "--long-event")
    assert code == 1 and "2026-06-01 is in the future" in out and "lasts" not in out
    ended = (
        TYPO.read_text()
        .replace("052 2052/12/09", "052 2025/03/01")
        .replace("042 2025/12/01", "042 2024/09/01")
    )
    league.write_text(ended.replace("25/12/0", "24/12/0"))
    code, out, _ = await cli(capsys, "validate", str(league))
    assert code == 1 and "over the limit of 90" in out
    code, out, _ = await cli(capsys, "validate", str(league), "--long-event")
    assert code == 0, out
    code, out, _ = await cli(
        capsys, "publish", str(league), "--long-event", "--new-players", "--no-wait", *common
    )
    assert code == 0 and await client.xlen(stream) == 1
    [(_, fields)] = await client.xrange(stream)
    assert json.loads(fields[b"__data__"])["long_event"] is True


async def test_a_round_date_outside_the_event_is_named_with_its_line(tmp_path, capsys, fixed_clock):
    trf = tmp_path / "rounds.trf"
    trf.write_text(
        TYPO.read_text()
        .replace("052 2052/12/09", "052 2025/12/09")
        .replace("  25/12/01", "  25/11/30")
    )
    code, out, _ = await cli(capsys, "validate", str(trf))
    assert (code, out) == (
        1,
        f"{trf}:13: 132 round 1 date 2025-11-30 is outside the event's dates 2025-12-01 to 2025-12-09 "
        "(implausible)\n",
    )


async def test_validate_lists_three_problems_of_one_file_in_one_run(tmp_path, capsys, fixed_clock):
    message = {
        "schema": "event.finished/v1",
        "event_id": "club-night-1",
        "system": "fide",
        "name": "Club night",
        "start_date": "2025-12-01",
        "end_date": "2025-12-01",
        "rounds": 2,
        "players": [{"id": "1001"}, {"id": "1002", "birth_year": "1990"}],
        "games": [
            {"round": 1, "a": "1001", "b": "1002", "score": 2},
            {"round": 2, "a": "1001", "b": "1003", "score": 1},
        ],
    }
    file = tmp_path / "club-night.json"
    file.write_text(json.dumps(message))
    code, out, _ = await cli(capsys, "validate", str(file))
    assert code == 1
    assert out.splitlines() == [
        f"{file}:1: $.players[1].birth_year: Expected `int | null`, got `str` (invalid)",
        f"{file}:1: $.games[0].score: Expected `float` <= 1.0 (invalid)",
        f"{file}:1: $.games[1].b: player '1003' is not declared in players (invalid)",
    ]


async def test_the_service_dead_letters_the_2052_typo_by_its_own_clock(
    redis_url, key_prefix, client, capsys
):
    """The one test on the real clock: the service reads it (2052 is after any day this runs)."""
    settings = settings_for(redis_url, key_prefix)
    processor = StreamProcessor(client, settings, settings.input_streams[0], default_registry())
    await processor.ensure_group()
    [entry_id] = await publish(client, settings, typo_event())
    await processor.handle(entry_id)
    [letter] = await rejections(client, settings)
    assert (letter.reason, letter.path, letter.source_id) == ("implausible", "$.end_date", entry_id)
    assert letter.message.startswith("end_date 2052-12-09 is in the future (today is ")
    assert letter.message.endswith("(and 1 more)")
    assert await outputs(client, settings) == []


async def test_the_service_judges_by_the_day_it_reads(redis_url, key_prefix, client, capsys):
    """A day ahead passes, two are implausible; a close of a period not over too."""
    settings = settings_for(redis_url, key_prefix)
    processor = StreamProcessor(client, settings, settings.input_streams[0], default_registry())
    processor.decoder.clock = lambda: TODAY
    await processor.ensure_group()
    event = msgspec.json.decode(typo_event())
    ahead = dict(event, event_id="one-day-ahead", start_date="2025-12-05", end_date="2025-12-11")
    late = dict(ahead, event_id="two-days-ahead", end_date="2025-12-12")
    close = {
        "schema": "period.closed/v1",
        "system": "fide",
        "pool": "standard",
        "period": "2025-12",
    }
    ids = await publish(client, settings, ahead, late, close)
    await processor.handle(ids[-1])
    letters = await rejections(client, settings)
    assert [(x.source_id, x.reason, x.path) for x in letters] == [
        (ids[1], "implausible", "$.end_date"),
        (ids[2], "implausible", "$.period"),
    ]
    [rated] = await outputs(client, settings)
    assert rated.event_id == "one-day-ahead"
