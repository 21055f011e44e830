"""The compact encoding of stored results and history states (service/compact.py, D100)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
import zlib
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import EventFinished
from schemas.fide import FideState, FirstEvent, InitialGame, PeriodSums, PublishedRating
from schemas.periods import period_of
from schemas.ratings import RatingsUpdated
from schemas.records import PlayerRecord
from service.compact import LARGE, TAG, CompactError, compact, expand, is_compact
from service.compactdict import SHA256, V1
from service.readmodel import pack_message, unpack_message
from service.timeline import (
    Archived,
    decode_archived,
    encode_archived,
    order_key,
    pack_state,
    unpack_state,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_dictionary_never_changes():
    assert hashlib.sha256(V1).hexdigest() == SHA256
    assert SHA256 == PINNED


PINNED = "d13c5879366f705bede39ce1c1d85c18794ab43083632f45c1cf581a7c698f3f"


def _rated(system: str) -> list[RatingsUpdated]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "rate",
            str(ROOT / f"deploy/examples/{system}-event.json"),
            "--ratings",
            str(ROOT / f"deploy/examples/{system}-ratings.jsonl"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [msgspec.json.decode(line, type=RatingsUpdated) for line in out.splitlines() if line]


@pytest.mark.parametrize("system", ["cfc", "fide", "naspa"])
def test_a_message_is_kept_compact_and_read_back(system):
    [message] = _rated(system)
    plain = msgspec.msgpack.encode(message)
    stored = pack_message(message)
    assert is_compact(stored) and stored[0] == TAG
    assert len(stored) * 2 < len(plain)
    assert unpack_message(stored) == message
    assert unpack_message(plain) == message  # what an earlier version stored


def test_a_state_compact_only_where_shorter():
    small = PlayerRecord(system="cfc", pool="regular", id="1", rating=1500, games=30)
    assert not is_compact(pack_state(small))
    assert unpack_state("cfc", "regular", "1", pack_state(small)) == small
    lines = (ROOT / "deploy/examples/fide-ratings.jsonl").read_text().splitlines()
    for line in lines:
        record = msgspec.json.decode(line, type=PlayerRecord)
        packed = pack_state(record)
        assert unpack_state(record.system, record.pool, record.id, packed) == record


def test_plain_values_pass_and_unknown_ones_are_refused():
    assert expand(b"") == b""
    assert expand(b"\x93\x01\x02\x03") == b"\x93\x01\x02\x03"
    raw = json.dumps({"a": list(range(50))}).encode()
    stored = compact(raw)
    assert is_compact(stored) and expand(stored) == raw
    with pytest.raises(CompactError, match="version 9"):
        expand(bytes((TAG, 9)) + stored[2:])
    with pytest.raises(CompactError, match="damaged"):
        expand(stored[: len(stored) // 2])
    with pytest.raises(CompactError, match="damaged"):
        expand(stored[:2] + b"\xff\xff\xff")


def test_an_archive_an_earlier_version_wrote_is_read():
    [event] = [
        msgspec.json.decode(
            (ROOT / "deploy/examples/fide-event.json").read_bytes(), type=EventFinished
        )
    ]
    archived = Archived(order_key(event, 1, 0), event, 2, b"digest", False)
    stored = encode_archived(archived)
    assert is_compact(stored)
    back = decode_archived(stored)
    assert (back.key, back.event.event_id, back.revision, back.digest) == (
        archived.key,
        event.event_id,
        2,
        b"digest",
    )
    assert decode_archived(expand(stored)) == back  # plain, as before D100


# A FIDE state of any content (D123): lists, open periods whose games are of any period,
# event and day (the arrays group consecutive games that share them), pooled games, a first
# event; the packed state reads back as the record.
_periods = st.integers(2000 * 12, 2100 * 12).map(period_of)
_days = st.dates(dt.date(2000, 1, 1), dt.date(2100, 12, 31))
_ids = st.sampled_from(["e1", "open-2025", "x" * 40])
_game = st.builds(InitialGame, _periods, _ids, _days, st.integers(1000, 3000), st.integers(0, 2))
_state = st.builds(
    FideState,
    published=st.lists(
        st.builds(
            PublishedRating,
            _periods,
            st.none() | st.integers(1000, 3000),
            st.none() | st.integers(10, 40),
        ),
        max_size=4,
    ),
    periods=st.lists(
        st.builds(
            PeriodSums,
            _periods,
            st.integers(-5000, 5000),
            st.integers(0, 50),
            st.integers(0, 100),
            st.lists(_game, max_size=8),
        ),
        max_size=3,
    ),
    initial_games=st.lists(_game, max_size=8),
    first_event=st.none() | st.builds(FirstEvent, _days, _ids),
)


@settings(max_examples=300, deadline=None)
@given(_state, st.none() | st.integers(1000, 3000))
def test_a_fide_state_packed_as_arrays_reads_back(state, rating):
    record = PlayerRecord(
        system="fide",
        pool="standard",
        id="9",
        rating=rating,
        status="established" if rating else "unrated",
        games=30,
        fide=state,
    )
    packed = pack_state(record)
    assert unpack_state("fide", "standard", "9", packed) == record
    before = msgspec.msgpack.encode(
        [rating, 2 if rating else 0, 30, None, None, False, False, None, None, state]
    )
    assert unpack_state("fide", "standard", "9", before) == record  # packed before D123


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3_000) | st.builds(lambda n: bytes(range(256)) * n, st.integers(0, 200)))
def test_the_primed_compressor_writes_what_a_new_one_writes(raw):
    """compact() copies a compressor with the dictionary loaded: its bytes are a new one's (a
    stored value is compared as bytes, D100), one value after another."""
    level, window, memory = (3, 15, 8) if len(raw) >= LARGE else (6, 14, 7)  # D124, D144
    deflate = zlib.compressobj(level, zlib.DEFLATED, -window, memory, zlib.Z_DEFAULT_STRATEGY, V1)
    fresh = bytes((TAG, 1)) + deflate.compress(raw) + deflate.flush()
    assert compact(raw) == (fresh if len(fresh) < len(raw) and len(raw) >= 24 else raw)
    if raw[:1] != bytes((TAG,)):  # MessagePack never starts with it
        assert expand(compact(raw)) == raw
