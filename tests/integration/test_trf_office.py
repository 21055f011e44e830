"""`publish` of a TRF against a real Redis (issue 18): the tournament's identity is its event
id, so a renamed copy of a rated tournament is "already rated" and nothing is sent; a changed
re-export is refused with the `correct` hint and nothing is sent; a correction is published
with `correct`, after which the corrected file is "already rated" too. The service's own
stream processor rates what is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from schemas.records import PlayerRecord
from service.cli.main import main
from service.engine.registry import default_registry
from service.formats.ratinglists import render_csv
from service.runtime.processor import StreamProcessor
from tests.integration.helpers import outputs, rejections, settings_for

pytestmark = pytest.mark.integration

OPEN = Path(__file__).resolve().parents[1] / "data" / "autumn-open-2025.trf"
IDENTITY = "autumn-open-2025.2025-11-01.55fb111f"
FIDE_LIST = [
    PlayerRecord(
        system="fide", pool="standard", id=pid, rating=rating, status="established", games=60
    )
    for pid, rating in (("1001", 2300), ("1002", 2200), ("1003", 2100), ("1004", 2000))
]
# Round 1, Charlie - Delta: a draw in the open; Charlie won, says the re-export.
CHANGED = (
    ("     4 w =     2 b 1", "     4 w 1     2 b 1"),
    ("     3 b =     5 w 1", "     3 b 0     5 w 1"),
)


async def cli(capsys, *args: str) -> tuple[int, str, str]:
    """The command line, from an async test (it runs its own event loop): exit code, out, err."""
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_a_rated_tournament_is_not_rated_twice(
    tmp_path, redis_url, key_prefix, client, capsys
):
    settings = settings_for(redis_url, key_prefix)
    stream = settings.input_streams[0]
    common = ["--stream", stream, "--redis-url", redis_url]
    listing = tmp_path / "fide.csv"
    listing.write_text(render_csv(FIDE_LIST))
    assert (
        await cli(capsys, "import", str(listing), "--system", "fide", "--pool", "standard", *common)
    )[0] == 0
    processor = StreamProcessor(client, settings, stream, default_registry())
    await processor.ensure_group()

    first = tmp_path / "club-autumn.trf"
    first.write_text(OPEN.read_text())
    code, out, _ = await cli(capsys, "publish", str(first), *common)
    assert code == 0
    await processor.handle(out.strip())
    capsys.readouterr()  # the processor's log lines
    [rated] = await outputs(client, settings)
    assert rated.event_id == IDENTITY and await client.xlen(stream) == 1

    # A renamed copy (the pairing program's "final" export): the same tournament, the same content.
    renamed = tmp_path / "club-autumn-final.trf"
    renamed.write_text(OPEN.read_text())
    code, out, err = await cli(capsys, "publish", str(renamed), *common)
    assert (code, err) == (0, "")
    assert (
        out
        == f"tournament 'Autumn Open 2025' (event id {IDENTITY}) was already rated, nothing to do\n"
    )
    assert await client.xlen(stream) == 1  # nothing sent

    # A re-export with a changed result and the name retyped: the same event id, other content.
    changed_text = OPEN.read_text().replace("012 Autumn Open 2025", "012 AUTUMN  Open 2025")
    for old, new in CHANGED:
        assert old in changed_text
        changed_text = changed_text.replace(old, new)
    changed = tmp_path / "club-autumn-final-2.trf"
    changed.write_text(changed_text)
    code, out, err = await cli(capsys, "publish", str(changed), *common)
    assert (code, out) == (2, "")
    assert err == (
        f"rating-service publish: tournament 'AUTUMN  Open 2025' (event id {IDENTITY}) was already rated "
        f"with other results: publish it with `rating-service correct {changed}`\n"
    )
    assert await client.xlen(stream) == 1  # nothing sent

    # So the director corrects it; afterwards that file is "already rated" and the old one is refused.
    code, out, _ = await cli(capsys, "correct", str(changed), *common)
    assert code == 0 and await client.xlen(stream) == 2
    await processor.handle(out.strip())
    capsys.readouterr()  # the processor's log lines
    revision = (await outputs(client, settings))[-1]
    assert (revision.kind, revision.event_id, revision.cause.type) == (
        "revision",
        IDENTITY,
        "corrected",
    )
    code, out, _ = await cli(capsys, "publish", str(changed), *common)
    assert code == 0 and out.endswith("was already rated, nothing to do\n")
    code, _, err = await cli(capsys, "publish", str(first), *common)
    assert code == 2 and err.endswith(
        "was rated with these results and corrected since: to restore them, publish it with "
        f"`rating-service correct {first}`\n"
    )
    assert await client.xlen(stream) == 2 and await rejections(client, settings) == []


async def test_same_name_and_start_elsewhere_is_named_and_event_id_overrides(
    tmp_path, redis_url, key_prefix, client, capsys
):
    stream = f"{key_prefix}.events"
    common = ["--stream", stream, "--redis-url", redis_url]
    # Only the pre-check is under test here: the marker of the open, as the service writes it.
    await client.hset("{" + stream + "}:markers", f"event:{IDENTITY}", "0" * 64)
    elsewhere = tmp_path / "autumn-quebec.trf"
    elsewhere.write_text(OPEN.read_text().replace("022 Montreal", "022 Quebec"))
    code, out, err = await cli(capsys, "publish", str(elsewhere), *common)
    assert (code, out) == (2, "")
    assert err.startswith(
        "rating-service publish: tournament 'Autumn Open 2025' (event id autumn-open-2025.2025-11-01."
    )
    assert err.endswith(
        f"a tournament with the same name and start date was already rated as event id {IDENTITY} "
        f"(its city or federation differ): if it is this one, publish it with "
        f"`rating-service correct {elsewhere} --event-id {IDENTITY}`; if not, give --event-id\n"
    )
    assert await client.xlen(stream) == 0
    code, out, _ = await cli(
        capsys,
        "publish",
        str(elsewhere),
        "--event-id",
        "autumn-open-quebec-2025",
        "--new-players",
        *common,
    )
    assert code == 0 and await client.xlen(stream) == 1
    # The open itself, against a marker of other content: refused, with its options in the hint.
    code, _, err = await cli(capsys, "publish", str(OPEN), "--pool", "standard", *common)
    assert code == 2 and err.endswith(
        f"was already rated with other results: publish it with `rating-service correct {OPEN} --pool standard`\n"
    )
    assert await client.xlen(stream) == 1
