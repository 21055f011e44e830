"""The look before appending (service/cli/checks.py), through the command line against a real
Redis: a publish before the list, names that are not the record's, a mistyped withdrawal and
a close that is not due are refused with nothing appended; the flags let each through."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from schemas.records import PlayerRecord
from service.cli.main import main
from service.engine.registry import default_registry
from service.formats.ratinglists import render_csv
from service.runtime.processor import StreamProcessor
from tests.integration.helpers import settings_for

pytestmark = pytest.mark.integration

OPEN = Path(__file__).resolve().parents[1] / "data" / "autumn-open-2025.trf"
IDENTITY = "autumn-open-2025.2025-11-01.55fb111f"  # the open's event id (its identity)
NAMES = {
    "1001": "Alpha, Anna",
    "1002": "Bravo, Boris",
    "1003": "Charlie, Chloe",
    "1004": "Delta, Dmitri",
}
RATINGS = {"1001": 2300, "1002": 2200, "1003": 2100, "1004": 2000}


def fide_list(**names: str) -> list[PlayerRecord]:
    """The open's four rated players as the FIDE list has them (a name overridden by id)."""
    return [
        PlayerRecord(
            system="fide",
            pool="standard",
            id=pid,
            name=names.get(f"p{pid}", name),
            rating=RATINGS[pid],
            status="established",
            games=60,
        )
        for pid, name in NAMES.items()
    ]


@pytest.fixture
def office(tmp_path, redis_url, key_prefix, capsys):
    """Runs a command on the test's own stream: (exit code, standard output, standard error)."""
    stream = settings_for(redis_url, key_prefix).input_streams[0]

    async def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = await asyncio.to_thread(main, [*args, "--stream", stream, "--redis-url", redis_url])
        seen = capsys.readouterr()
        return code, seen.out, seen.err

    async def load(records: list[PlayerRecord]) -> None:
        listing = tmp_path / "list.csv"
        listing.write_text(render_csv(records))
        assert (await run("import", str(listing), "--force"))[0] == 0

    run.stream = stream  # type: ignore[attr-defined]
    run.load = load  # type: ignore[attr-defined]
    return run


async def rate_all(client, redis_url: str, key_prefix: str) -> None:
    """What the service does with every entry appended so far."""
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()
    for entry_id, _ in await client.xrange(stream):
        await processor.handle(entry_id.decode())


async def test_a_publish_before_the_list_is_refused_unless_new_players(office, client):
    code, out, err = await office("publish", str(OPEN))
    assert (code, out) == (2, "")
    assert err == (
        f"rating-service publish: {IDENTITY}: 5 of 5 players have no record in fide/standard: "
        "import the list first? (--new-players rates them as new players); nothing appended\n"
    )
    assert await client.xlen(office.stream) == 0
    code, out, err = await office("publish", str(OPEN), "--new-players")
    assert code == 0 and await client.xlen(office.stream) == 1
    assert err.startswith(
        f"note: {IDENTITY}: 5 of 5 players have no record in fide/standard, rated as new "
        "players: 1001 (Alpha, Anna), 1002 (Bravo, Boris)"
    )


async def test_a_few_new_players_are_said_and_sent(office, client):
    await office.load(fide_list())
    code, out, err = await office("publish", str(OPEN))
    assert code == 0 and await client.xlen(office.stream) == 1
    assert err == (
        f"note: {IDENTITY}: 1 of 5 players have no record in fide/standard, rated as new "
        f"players: sn5@{IDENTITY} (Echo, Emil)\n"
    )


async def test_a_name_not_the_records_is_refused_unless_accepted(office, client):
    await office.load(fide_list(p1001="Tremblay, Anne"))
    code, out, err = await office("publish", str(OPEN))
    assert (code, out) == (2, "")
    assert err == (
        f"rating-service publish: {IDENTITY}: 1 name differs from the record with the same id: "
        "1001 is 'Tremblay, Anne' in the store, 'Alpha, Anna' in the event (a wrong id? "
        "--accept-names rates them anyway); nothing appended\n"
    )
    assert await client.xlen(office.stream) == 0
    code, out, err = await office("publish", str(OPEN), "--accept-names")
    assert code == 0 and await client.xlen(office.stream) == 1
    assert "1 name differs from the record with the same id (accepted)" in err


async def test_names_match_folded_and_in_either_order(office, client, tmp_path):
    # "Lapointe, Luc" in the TRF, "luc lapointe" in the list; "Bravo, Boris" as "BRAVÓ BORIS".
    await office.load(fide_list(p1001="luc lapointe", p1002="BRAVÓ BORIS"))
    renamed = tmp_path / "renamed.trf"
    renamed.write_text(OPEN.read_text().replace("Alpha, Anna  ", "Lapointe, Luc"))
    code, out, err = await office("publish", str(renamed), "--event-id", "club-night-1")
    assert code == 0 and await client.xlen(office.stream) == 1
    assert "name" not in err  # only the new player is said


async def test_a_rating_in_the_trf_not_the_stores_is_said(office, client):
    listed = fide_list()
    listed[2] = PlayerRecord(**{**msgspec.structs.asdict(listed[2]), "rating": 2090})
    await office.load(listed)
    code, out, err = await office("publish", str(OPEN))
    assert code == 0 and await client.xlen(office.stream) == 1
    assert (
        f"warning: {IDENTITY}: 1003 (Charlie, Chloe) is 2100 in the file, 2090 in fide/standard "
        "(the service rates from the store)\n"
    ) in err


async def test_a_mistyped_withdrawal_names_the_closest_ids(office, client, redis_url, key_prefix):
    await office.load(fide_list())
    assert (await office("publish", str(OPEN)))[0] == 0
    await rate_all(client, redis_url, key_prefix)
    length = await client.xlen(office.stream)
    mistyped = IDENTITY[:-1] + "e"
    code, out, err = await office("withdraw", mistyped, "--system", "fide")
    assert (code, out) == (2, "")
    assert err == (
        f"rating-service withdraw: event {mistyped!r} is not a rated event of stream "
        f"{office.stream}: did you mean {IDENTITY}?; nothing appended\n"
    )
    assert await client.xlen(office.stream) == length
    code, _, err = await office("withdraw", IDENTITY, "--system", "fide", "--pool", "rapid")
    assert code == 2 and "was rated in fide/standard, not fide/rapid" in err
    assert await client.xlen(office.stream) == length
    code, out, _ = await office("withdraw", IDENTITY, "--system", "fide")  # the right id: sent
    assert code == 0 and await client.xlen(office.stream) == length + 1
    await rate_all(client, redis_url, key_prefix)
    code, out, _ = await office("withdraw", IDENTITY, "--system", "fide")
    assert (code, out) == (0, f"event {IDENTITY!r} is withdrawn already, nothing to do\n")
    assert await client.xlen(office.stream) == length + 1


async def test_a_close_not_due_is_refused_and_no_check_appends(
    office, client, redis_url, key_prefix
):
    await office.load(fide_list())
    assert (await office("publish", str(OPEN)))[0] == 0
    await rate_all(client, redis_url, key_prefix)
    length = await client.xlen(office.stream)
    # 2026-01 is over by the clock (a month not over yet is refused before the look-up, as
    # implausible: tests/integration/test_plausible_dates.py), but not due by the store.
    code, out, err = await office("close-period", "fide", "standard", "2026-01")
    assert (code, out) == (2, "")
    assert err == (
        "rating-service close-period: period 2026-01 of fide/standard is in the future: its last "
        "rated event ended 2025-11-09, so the latest period it may close is 2025-12 (a typo in "
        "the period?) (period_not_due); nothing appended\n"
    )
    assert await client.xlen(office.stream) == length
    code, _, err = await office("close-period", "fide", "2025-12")
    assert code == 2 and "period 2025-11 of fide/standard has rated games and is not closed" in err
    assert await client.xlen(office.stream) == length
    code, out, err = await office("close-period", "fide", "standard", "2026-01", "--no-check")
    assert (code, err) == (0, "") and await client.xlen(office.stream) == length + 1
    code, _, _ = await office("close-period", "fide", "2025-11")  # due: sent
    assert code == 0 and await client.xlen(office.stream) == length + 2
    await rate_all(client, redis_url, key_prefix)
    code, out, _ = await office("close-period", "fide", "2025-11")
    assert (code, out) == (0, "period 2025-11 of fide/standard is closed already, nothing to do\n")
    assert await client.xlen(office.stream) == length + 2


async def test_no_check_appends_without_a_look(office, client):
    code, out, err = await office("publish", str(OPEN), "--no-check")
    assert (code, err) == (0, "") and await client.xlen(office.stream) == 1
    code, _, _ = await office("withdraw", "no-such-event", "--system", "fide", "--no-check")
    assert code == 0 and await client.xlen(office.stream) == 2
