"""The dead letters (event.rejected/v1, schemas/rejected.py): the letter the processor writes
for an entry it refuses, and what `rating-service rejected` (service/cli/rejected.py) and the
`rating_dead_letter_oldest_age_seconds` gauge do with them: read, find, redrive, purge.

The dead-letter stream stays an append-only audit: a redrive re-appends the letter's message
(or a fixed one) to the input stream it came from and records, in the stream's redrive ledger
(`redriven_key`: letter id -> new entry id), which entry it became. Redis runs each script
atomically, so a redrive appends and records together, and two people redriving the same
letter at once do it once. Only a purge removes letters (and their ledger fields).
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple, Protocol

import msgspec

from schemas.rejected import EventRejected
from service.entryids import entry_order
from service.rating import Rejected
from service.runtime.connection import on_owner
from service.runtime.keys import redriven_key
from service.runtime.store import DATA_FIELD, text

_letters = msgspec.json.Decoder(EventRejected)

# Each letter of a stream, oldest first: its id, and the letter (None: the entry is not an
# event.rejected/v1 message).
Letters = list[tuple[str, EventRejected | None]]


class RefusedEntry(Protocol):
    """What a letter keeps of the input entry it is about (the processor's Entry)."""

    @property
    def id(self) -> str: ...
    @property
    def fields(self) -> dict: ...
    @property
    def event_id(self) -> str | None: ...


def rejection_message(rejected: Rejected, stream: str, entry: RefusedEntry) -> EventRejected:
    """The dead-letter message: the entry's fields verbatim, where from, and why."""
    as_text: dict[str, str] = {}
    as_base64: dict[str, str] = {}
    for key, value in entry.fields.items():
        name = key.decode("utf-8", "backslashreplace")
        try:
            as_text[name] = value.decode("utf-8")
        except UnicodeDecodeError:
            as_base64[name] = base64.b64encode(value).decode()
    return EventRejected(
        reason=rejected.reason,  # type: ignore[arg-type]  # Rejected.reason is one of schemas.rejected.Reason
        message=rejected.message,
        path=rejected.path,
        source_stream=stream,
        source_id=entry.id,
        event_id=rejected.event_id or entry.event_id,
        fields=as_text,
        fields_base64=as_base64,
    )


def decode_letter(fields: dict) -> EventRejected | None:
    """The letter in a dead-letter entry's fields (None: not an event.rejected/v1 message)."""
    try:
        return _letters.decode(fields[DATA_FIELD.encode()])
    except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def original_data(letter: EventRejected) -> bytes | None:
    """The rejected entry's `__data__`, as it was (text, or the base64-kept bytes)."""
    if DATA_FIELD in letter.fields:
        return letter.fields[DATA_FIELD].encode()
    if DATA_FIELD in letter.fields_base64:
        return base64.b64decode(letter.fields_base64[DATA_FIELD])
    return None


def states(letters: Letters, redriven: dict[str, str]) -> dict[str, str]:
    """Each letter's state: `open`, `redriven as ID`, or, when the redriven entry was rejected
    again, `redriven as ID, rejected again: LETTER`."""
    again = {(l.source_stream, l.source_id): i for i, l in letters if l is not None}
    found = {}
    for letter_id, letter in letters:
        new = redriven.get(letter_id)
        if new is None:
            found[letter_id] = "open"
            continue
        found[letter_id] = f"redriven as {new}"
        if letter is not None and (letter.source_stream, new) in again:
            found[letter_id] += f", rejected again: {again[(letter.source_stream, new)]}"
    return found


async def read_letters(client: Any, stream: str) -> tuple[Letters, dict[str, str]]:
    """Every letter of a dead-letter stream, and its redrive ledger (letter id -> entry id)."""
    async with client.pipeline(transaction=False) as pipe:
        pipe.xrange(stream)
        pipe.hgetall(redriven_key(stream))
        entries, ledger = await pipe.execute()
    letters = [(raw_id.decode(), decode_letter(fields)) for raw_id, fields in entries]
    return letters, {k.decode(): v.decode() for k, v in ledger.items()}


class Found(NamedTuple):
    """A dead letter found by its id: the stream that holds it, the letter (None: not an
    event.rejected/v1 message), and the entry it was last redriven as (None: open)."""

    stream: str
    letter: EventRejected | None
    redriven_as: str | None


async def find_letter(client: Any, streams: list[str], letter_id: str) -> Found | None:
    """The letter `letter_id` of the first of `streams` that holds it (None: none does)."""
    for stream in streams:
        entries = await client.xrange(stream, min=letter_id, max=letter_id)
        if entries:
            letter = decode_letter(entries[0][1])
            new = await client.hget(redriven_key(stream), letter_id) if letter else None
            return Found(stream, letter, text(new))
    return None


async def still_in_stream(client: Any, letter: EventRejected) -> bool:
    """Whether the entry a letter is about is still in its input stream (not trimmed or
    deleted)."""
    return bool(
        await client.xrange(letter.source_stream, min=letter.source_id, max=letter.source_id)
    )


# KEYS: input stream, ledger; ARGV: dead-letter id, __data__, "1" to redrive again.
# Returns {1, new entry id}, or {0, the entry id it was redriven as before}.
REDRIVE = (
    "if ARGV[3] ~= '1' and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then "
    "return {0, redis.call('HGET', KEYS[2], ARGV[1])} end "
    f"local id = redis.call('XADD', KEYS[1], '*', '{DATA_FIELD}', ARGV[2]) "
    "redis.call('HSET', KEYS[2], ARGV[1], id) return {1, id}"
)


class Redrive(NamedTuple):
    """One redrive: the letter (its id, the dead-letter stream that holds it, the letter) and
    the message to append to the letter's input stream."""

    letter_id: str
    stream: str
    letter: EventRejected
    data: bytes


async def redrive(client: Any, plan: Redrive, again: bool) -> tuple[bool, str]:
    """Append the plan's message to the letter's input stream and record it in the ledger, in
    one step (REDRIVE). Returns (True, the new entry id), or, when the letter was redriven
    meanwhile and `again` is not given, (False, the entry it was redriven as)."""
    fresh, entry_id = await client.eval(
        REDRIVE,
        2,
        plan.letter.source_stream,
        redriven_key(plan.stream),
        plan.letter_id,
        plan.data,
        "1" if again else "0",
    )
    return bool(fresh), text(entry_id)


class Purge(NamedTuple):
    """What a purge of one dead-letter stream removes: the letters before `min_id` (None:
    every letter), how many of them are open, and the ledger fields that go with them."""

    stream: str
    min_id: str | None
    letters: int
    opened: int
    stale: list[str]


async def plan_purge(client: Any, stream: str, min_id: str | None) -> Purge:
    """What `purge` would remove of `stream`: the letters before entry id `min_id` (None:
    all)."""
    letters, redriven = await read_letters(client, stream)

    def going(letter_id: str) -> bool:
        return min_id is None or entry_order(letter_id) < entry_order(min_id)

    gone = [i for i, _ in letters if going(i)]
    state = states(letters, redriven)
    opened = sum(1 for i in gone if state[i] == "open")
    return Purge(stream, min_id, len(gone), opened, [k for k in redriven if going(k)])


async def purge(client: Any, plan: Purge) -> None:
    """Remove the letters of a plan and their ledger fields, in one transaction on the
    stream's owner."""

    async def trim(owner: Any) -> None:
        async with owner.pipeline(transaction=True) as pipe:
            if plan.min_id is None:
                pipe.xtrim(plan.stream, maxlen=0)
            else:
                pipe.xtrim(plan.stream, minid=plan.min_id)
            if plan.stale:
                pipe.hdel(redriven_key(plan.stream), *plan.stale)
            await pipe.execute()

    await on_owner(client, plan.stream, trim)


OLDEST_OPEN_PAGES = 20  # pages of 50 letters: the walk's bound
# KEYS: dead-letter stream, ledger; ARGV: most pages. The id of the first letter not in the
# ledger (false: none); when the bound is reached, the last letter looked at (its age is
# then more than the true one's: an alert fires early rather than late).
_OLDEST_OPEN = (
    "local start = '-' local last = false "
    "for page = 1, tonumber(ARGV[1]) do "
    "local entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', 50) "
    "if #entries == 0 then return false end "
    "for _, e in ipairs(entries) do "
    "if redis.call('HEXISTS', KEYS[2], e[1]) == 0 then return e[1] end last = e[1] end "
    "start = '(' .. last end "
    "return last"
)


async def oldest_open_dead_letter(client: Any, dead_letter_stream: str) -> str | None:
    """The id of the oldest dead letter not redriven (None when none), found in Redis without
    shipping the letters: at most OLDEST_OPEN_PAGES x 50 are looked at (`rejected purge`
    keeps the redriven ones at the head of the stream few)."""
    found = await client.eval(
        _OLDEST_OPEN, 2, dead_letter_stream, redriven_key(dead_letter_stream), OLDEST_OPEN_PAGES
    )
    return text(found)
