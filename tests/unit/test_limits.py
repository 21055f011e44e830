"""The size limits (docs/operations/limits.md, D90-D92): the read budget's counts, the commit
limits' verdicts, the input limit's line and a refused entry's event id read without building
the document; the publishing commands refusing an over-size message before sending it."""

from __future__ import annotations

import asyncio
import json
import re
import tracemalloc

import msgspec
import pytest

from schemas.validation import InvalidMessage, Limits, decode_input
from service.cli.main import main
from service.runtime.commitsize import CommitLimits, CommitWrites, argument_bytes
from service.runtime.entries import event_id_of
from service.runtime.outputs import Output
from service.runtime.readbudget import ReadBudget, entry_bytes, read_budgeted
from service.runtime.settings import SettingsError, load_settings
from tests.messages import event

MIB = 1024 * 1024


def test_the_first_read_asks_for_what_fits_and_at_least_one():
    assert ReadBudget(64 * MIB, 16 * MIB, 64).first == 4
    assert ReadBudget(64 * MIB, 1 * MIB, 64).first == 64  # the batch size caps it
    assert ReadBudget(1 * MIB, 16 * MIB, 64).first == 1  # a budget under one entry: one
    budget = ReadBudget(64 * MIB, 16 * MIB, 64)
    assert budget.asked(4, 100) == 3  # room for three more maximal entries
    assert budget.asked(4, 64 * MIB) == 0 and budget.asked(64, 0) == 0


def run_reads(budget: ReadBudget, sizes: list[int]) -> tuple[list, list[int]]:
    """read_budgeted over a stream of entries of `sizes` bytes; the counts it asked for."""
    stream = [(str(n).encode(), {b"__data__": b"x" * size}) for n, size in enumerate(sizes)]
    asked: list[int] = []

    async def fetch(count: int, first: bool) -> list:
        assert first == (not asked)  # only the first read may block
        asked.append(count)
        done = sum(min(a, len(stream)) for a in asked[:-1])
        return stream[done : done + count]

    return asyncio.run(read_budgeted(budget, fetch)), asked


def test_small_entries_come_a_batch_a_read_in_several_round_trips():
    entries, asked = run_reads(ReadBudget(64 * MIB, 16 * MIB, 64), [100] * 200)
    assert len(entries) == 64 and asked[0] == 4 and sum(asked) == 64 and len(asked) == 21


def test_maximal_entries_never_hold_more_than_the_budget():
    max_bytes = 16 * MIB - 16
    entries, asked = run_reads(ReadBudget(64 * MIB, 16 * MIB, 64), [max_bytes] * 200)
    assert len(entries) == 4 and asked == [4]
    held = sum(entry_bytes(f) for _, f in entries)
    assert held <= 64 * MIB
    mixed, _ = run_reads(ReadBudget(64 * MIB, 16 * MIB, 64), [100, 100, 100, 100, max_bytes] * 9)
    assert sum(entry_bytes(f) for _, f in mixed) <= 64 * MIB


def test_a_short_read_ends_the_read():
    entries, asked = run_reads(ReadBudget(64 * MIB, 16 * MIB, 64), [100] * 6)
    assert len(entries) == 6 and asked == [4, 3]


def writes(*messages: int, commands: int = 0) -> CommitWrites:
    outputs = [Output("r", b"x" * size, True) for size in messages]
    return CommitWrites([("SET", "k", b"v" * commands)], outputs, list(range(len(messages))))


def test_a_message_over_its_limit_names_the_figure_and_the_setting():
    limits = CommitLimits(max_message_bytes=1_000, max_commit_bytes=10**9)
    assert limits.over(writes(10, 1_000), 2) is None
    over = limits.over(writes(10, 20, 1_001), 3)
    assert over is not None and over.keep == 2  # the two before it are committed
    assert over.message == (
        "its ratings.updated message would be 1,001 bytes, over the limit of 1,000 "
        "(RATING_MAX_MESSAGE_BYTES)"
    )
    assert limits.over(writes(5_000), 1).keep == 0  # alone: refused


def test_a_commit_over_its_limit_is_made_of_fewer_entries_then_refused():
    limits = CommitLimits(max_message_bytes=10**9, max_commit_bytes=10_000)
    four = writes(1, 1, 1, 1, commands=40_000)  # four times the limit
    over = limits.over(four, 4)
    assert over is not None and over.keep == 1 and "(RATING_MAX_COMMIT_BYTES)" in over.message
    assert limits.over(writes(1, 1, commands=15_000), 2).keep == 1
    assert limits.over(writes(1, commands=15_000), 1).keep == 0
    assert limits.over(writes(1, commands=9_000), 1) is None
    assert argument_bytes("é") == 2 and argument_bytes(12345) == 5 and argument_bytes(b"ab") == 2


def test_a_commits_bytes_are_its_arguments_bytes_of_every_kind():
    arguments = ["HSET", "ascii", "é-ß", b"\x00raw", bytearray(b"ab"), memoryview(b"abc")]
    arguments += [0, -12, 2**70, True, False, 1.5, 1e-7]
    commands = [tuple(arguments), ("EVAL", "return 1", 0, *arguments[::-1])]
    expected = sum(argument_bytes(a) for command in commands for a in command)
    assert CommitWrites(commands, [], []).bytes == expected == 2 * 66 + 13


def test_the_limits_are_settings():
    settings = load_settings(
        {
            "RATING_READ_BYTES": "1048576",
            "RATING_MAX_MESSAGE_BYTES": "2000",
            "RATING_MAX_COMMIT_BYTES": "3000",
        }
    )
    assert (settings.read_bytes, settings.max_message_bytes, settings.max_commit_bytes) == (
        1048576,
        2000,
        3000,
    )
    defaults = load_settings({})
    assert ReadBudget.of(defaults).first == 4 and defaults.max_message_bytes == 32 * MIB
    with pytest.raises(SettingsError, match="RATING_MAX_COMMIT_BYTES='0'"):
        load_settings({"RATING_MAX_COMMIT_BYTES": "0"})


def test_an_input_over_the_limit_is_refused_naming_the_setting():
    with pytest.raises(InvalidMessage) as info:
        decode_input(b" " * 1_001, Limits(max_bytes=1_000))
    assert info.value.reason == "too_large" and info.value.path == "$"
    assert (
        str(info.value) == "$: message is 1,001 bytes, over the limit of 1,000 (RATING_MAX_BYTES)"
    )


def test_a_refused_entry_s_event_id_is_read_without_building_it():
    data = msgspec.json.encode(
        event(event_id="huge", name="x" * 100, players=[{"id": f"p{i}"} for i in range(50_000)])
    )
    tracemalloc.start()
    try:
        assert event_id_of({b"__data__": data}) == "huge"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(data) // 20  # the document as objects is about 4 times its bytes
    assert event_id_of({b"__data__": b"[1]"}) is None
    assert event_id_of({b"__data__": b'{"event_id": 5}'}) is None


@pytest.mark.parametrize("command", ["publish", "correct"])
def test_publishing_refuses_an_over_size_message_before_sending(
    command, tmp_path, capsys, monkeypatch
):
    """No Redis answers at the URL: the refusal comes before any connection."""
    monkeypatch.setenv("RATING_MAX_BYTES", "200")
    monkeypatch.setenv("RATING_REDIS_URL", "redis://127.0.0.1:1/0")
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event()))
    size = path.stat().st_size
    assert main([command, str(path)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    said = f"{size:,}" if command == "publish" else "[0-9,]+"  # correct sends event.corrected/v1
    assert re.search(
        f"event.json:1: \\$: message is {said} bytes, over the limit of 200 \\(RATING_MAX_BYTES\\) \\(too_large\\)$",
        err,
    )
