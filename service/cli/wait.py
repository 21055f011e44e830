"""Waiting for what became of appended input entries (`publish`, `correct`, `withdraw`,
`close-period` and `rejected redrive` with `--wait`): rated, rejected, or a duplicate.

How it knows, from what the service already writes (no extra key, no polling of the store):
- Before appending, the ids of the newest entries of the output and dead-letter streams are
  read (in the same round trip, ahead of the XADDs): whatever the entries cause comes after.
- A `ratings.updated/v1` whose `source_id` is the entry's id is its result (a correction or a
  late event has several: its own result, then the later events' revisions); an
  `event.rejected/v1` with the entry's `source_stream` and `source_id` is its rejection.
- The input stream's applied cursor (`{S}:cursor`) is set in the same MULTI/EXEC as those
  messages. Once it has reached the entry, everything the entry caused is on the two streams:
  an entry passed by the cursor with no message at all was a duplicate (already applied with
  the same content: nothing changed).

With --durable, once every entry has its outcome, each input stream's last commit is
confirmed on disk (service/runtime/durability.py, D85); a commit a Redis restart or failover
took meanwhile is waited for again (the service rates the entry again).

Exit status: 0 when every entry was rated (or was a duplicate), 1 when any was rejected,
3 when any had no outcome within --timeout (no service running on that stream, or far behind),
4 with --durable when the server did not confirm the commits on disk (D86).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from schemas.ratings import RatingsUpdated
from schemas.rejected import EventRejected
from service.cli.errors import EXIT_FAILED, EXIT_NOT_DURABLE, EXIT_OK, EXIT_TIMEOUT
from service.cli.settings import cli_settings
from service.cli.watch import fields_table, rejection_rows, render, store_names
from service.entryids import entry_order
from service.runtime.durability import Durability, confirm_durable
from service.runtime.keys import StreamKeys
from service.runtime.partitions import Partition
from service.runtime.replies import text
from service.runtime.store import DATA_FIELD

_outputs = msgspec.json.Decoder(RatingsUpdated)
_letters = msgspec.json.Decoder(EventRejected)
DEFAULT_TIMEOUT_S = 30.0
POLL_MS = 250  # longest single block: how soon a duplicate (which writes nothing) is noticed
PAGE = 500


@dataclass(frozen=True)
class Label:
    """What an appended entry is, for people: `text` (the event id, or the period closed)
    heads its report; `event_id` picks its own results out of those it set off; `reason`,
    a correction's or withdrawal's, is echoed under the heading."""

    text: str
    event_id: str | None = None
    reason: str | None = None

    def __str__(self) -> str:
        return self.text


@dataclass
class EntryOutcome:
    """What one appended entry came to, so far."""

    entry_id: str
    label: Label
    outputs: list[RatingsUpdated] = field(default_factory=list)
    letter: tuple[str, EventRejected] | None = None  # (dead-letter id, letter)
    applied: bool = False  # the applied cursor has reached it

    @property
    def state(self) -> str:
        """`rejected`, `rated`, `duplicate`, or `waiting` (not applied yet)."""
        if self.letter is not None:
            return "rejected"
        if not self.applied:
            return "waiting"
        return "rated" if self.outputs else "duplicate"


class Tracker:
    """Matches the output and dead-letter messages to the appended entries, and the applied
    cursor to their ids (pure: fed by `wait`, unit-tested on its own)."""

    def __init__(self, stream: str, entries: list[tuple[str, Label]]):
        self.stream = stream
        self.outcomes = {entry_id: EntryOutcome(entry_id, label) for entry_id, label in entries}

    def output(self, message: RatingsUpdated) -> None:
        outcome = self.outcomes.get(message.source_id)
        if outcome is not None:
            outcome.outputs.append(message)

    def dead_letter(self, letter_id: str, letter: EventRejected) -> None:
        outcome = self.outcomes.get(letter.source_id)
        if outcome is not None and letter.source_stream == self.stream:
            outcome.letter = (letter_id, letter)

    def cursor(self, cursor: str | None) -> None:
        if cursor is None:
            return
        passed = entry_order(cursor)
        for outcome in self.outcomes.values():
            if entry_order(outcome.entry_id) <= passed:
                outcome.applied = True

    @property
    def done(self) -> bool:
        return all(o.state != "waiting" for o in self.outcomes.values())

    def exit_code(self) -> int:
        states = {o.state for o in self.outcomes.values()}
        if "rejected" in states:
            return EXIT_FAILED
        if "waiting" in states:
            return EXIT_TIMEOUT
        return EXIT_OK


def label_of(raw: bytes) -> Label:
    """What a checked input message is, for people: its event id, or the period it closes;
    with the reason it gives, if any."""
    document = msgspec.json.decode(raw)
    reason = document.get("reason") or None
    if "event_id" in document:
        event_id = str(document["event_id"])
        return Label(event_id, event_id, reason)
    pool = document.get("pool") or "(default pool)"
    return Label(f"period {document.get('system')}/{pool} {document.get('period')}", None, reason)


def own_first(outcome: EntryOutcome) -> tuple[list[RatingsUpdated], list[RatingsUpdated]]:
    """The entry's results in the order to show them: its own (its event's result, or the
    list's chunks), then the revisions of later events it set off, in stream order."""
    event_id = outcome.label.event_id

    def mine(m: RatingsUpdated) -> bool:  # a list, its withdrawal, or the event's own
        return m.kind == "list" or m.event_id is None or m.event_id == event_id

    return [m for m in outcome.outputs if mine(m)], [m for m in outcome.outputs if not mine(m)]


def report(outcome: EntryOutcome, timeout: float, known: Mapping[str, str] | None = None) -> str:
    """One entry's outcome for people: a heading line (and the reason the entry gave, as
    given), then the tables (with the players' names: the messages', else those `known`)
    or why it was refused."""
    head = f"{outcome.entry_id}  {outcome.label}"
    given = f"\n  reason given: {outcome.label.reason}" if outcome.label.reason else ""
    state = outcome.state
    if state == "rejected":
        assert outcome.letter is not None
        letter_id, letter = outcome.letter
        return "\n".join(
            [
                f"{head}: REJECTED ({letter.reason}), dead letter {letter_id}{given}",
                *fields_table(rejection_rows(letter)),
                f"  (rating-service rejected show {letter_id}; with a fixed message: "
                f"rating-service rejected redrive {letter_id} --file FIXED.json)",
            ]
        )
    if state == "duplicate":
        return f"{head}: duplicate: already applied with this content, nothing changed{given}"
    if state == "waiting":
        return f"{head}: no outcome within {timeout:g} s (not applied yet){given}"
    own, later = own_first(outcome)
    done = "rated"
    if own and own[0].kind == "revision":
        done = "withdrawn" if own[0].withdrawn else "re-rated"
    parts = [f"{head}: {done}{given}", *(render(m, known=known) for m in own)]
    if later:
        parts.append(f"... and {len(later)} later event{'s' if len(later) != 1 else ''} re-rated:")
        parts.extend(render(m, known=known) for m in later)
    return "\n\n".join(parts)


async def tails(client: Any, *streams: str) -> dict[str, str]:
    """The id of each stream's newest entry ("0-0" for an empty or missing stream): read just
    before appending, everything the appended entries cause comes after it."""
    async with client.pipeline(transaction=False) as pipe:
        for stream in streams:
            pipe.xrevrange(stream, count=1)
        replies = await pipe.execute()
    return {s: (r[0][0].decode() if r else "0-0") for s, r in zip(streams, replies)}


async def wait(
    client: Any,
    tracker: Tracker,
    since: dict[str, str],
    output_stream: str,
    dead_letter_stream: str,
    timeout: float,
) -> None:
    """Read the output and dead-letter streams from `since` on, and the applied cursor,
    until every entry has an outcome or `timeout` seconds have passed."""
    from service.runtime.connection import xread  # on a cluster, the streams may be in other slots

    cursor_key = StreamKeys(tracker.stream).cursor
    last = dict(since)
    deadline = time.monotonic() + timeout

    def take(reply: list) -> int:
        count = 0
        for stream_name, entries in reply:
            stream = text(stream_name)
            for raw_id, fields in entries:
                entry_id = raw_id.decode()
                last[stream] = entry_id
                count += 1
                data = fields.get(DATA_FIELD.encode())
                try:
                    if stream == output_stream:
                        tracker.output(_outputs.decode(data))
                    else:
                        tracker.dead_letter(entry_id, _letters.decode(data))
                except (TypeError, msgspec.DecodeError, msgspec.ValidationError):
                    continue  # someone else's message: not ours to judge
        return count

    while True:
        # The cursor first, then everything on the streams up to now: an entry the cursor has
        # passed has all its messages there already (one MULTI/EXEC wrote them together).
        tracker.cursor(text(await client.get(cursor_key)))
        while take(await xread(client, last, count=PAGE)) >= PAGE:
            pass
        if tracker.done:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        take(
            await xread(client, last, count=PAGE, block=max(1, min(POLL_MS, int(remaining * 1000))))
        )


async def diagnose(client: Any, stream: str, group: str) -> str:
    """Why nothing came, as far as Redis can tell: is a consumer group reading the stream?"""
    try:
        groups = await client.xinfo_groups(stream)
    except Exception:  # no such stream (nothing was appended?): nothing to say
        return ""
    for info in groups:
        name = text(info["name"])
        if name == group:
            lag = info.get("lag")
            return (
                f"consumer group {group} on {stream}: {info['consumers']} consumer(s), "
                f"{info['pending']} pending, lag {lag if lag is not None else 'unknown'}"
            )
    return f"no consumer group {group!r} reads {stream}: is the service running, on this stream (RATING_INPUT_STREAMS)?"


def wants_wait(args: argparse.Namespace) -> bool:
    """--wait / --no-wait; neither: wait when standard output is a terminal (a person, who
    wants to know), not in a pipe or a script (which reads the entry ids, as before)."""
    if getattr(args, "durable", False):
        return True
    if args.wait is not None:
        return bool(args.wait)
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def watched_streams(args: argparse.Namespace, partition: Partition) -> tuple[str, str, str]:
    """A partition's input, output and dead-letter streams (--output-stream and
    --dead-letter-stream replace the last two)."""
    return (
        partition.input,
        args.output_stream or partition.output,
        args.dead_letter_stream or partition.dead_letter,
    )


async def finish(
    client: Any,
    args: argparse.Namespace,
    entries: list[tuple[str, str, Label]],
    watched: list[tuple[str, str, str]],
    since: dict[str, str],
) -> int:
    """Wait for every appended entry (input stream, entry id, label), each partition's
    (`watched`: input, output, dead-letter streams) at the same time, with --durable until
    each stream's commit is on disk too (service/runtime/durability.py), print each outcome
    in the order of `entries`, and return the exit status."""
    deadline = time.monotonic() + args.timeout
    while True:
        trackers = await track(client, args, entries, watched, since, deadline)
        durable = await confirm(client, args, entries, trackers, deadline)
        lost = [d for d in durable if not d.applied]
        if not lost or any(not d.present for d in lost) or time.monotonic() >= deadline:
            break
        for found in lost:  # a Redis restart or failover took the commit: it is rated again
            print(f"rating-service {args.command}: {found.describe()}; waiting", file=sys.stderr)
    for stream, entry_id, _ in entries:
        outcome = trackers[stream].outcomes[entry_id]
        known: dict[str, str] = {}
        for message in outcome.outputs:
            if message.kind == "list":  # a list carries no names: the store's
                known.update(await store_names(client, stream, message))
        print(report(outcome, args.timeout, known) + "\n", flush=True)
    codes = [tracker.exit_code() for tracker in trackers.values()]
    code = EXIT_FAILED if EXIT_FAILED in codes else max(codes)
    group = cli_settings().group
    for tracker in trackers.values():
        if tracker.exit_code() == EXIT_TIMEOUT:
            why = await diagnose(client, tracker.stream, group)
            print(
                f"rating-service {args.command}: timed out after {args.timeout:g} s"
                + (f": {why}" if why else ""),
                file=sys.stderr,
            )
    for found in durable:
        if found.confirmed:
            print(found.describe(), flush=True)
        else:
            print(f"rating-service {args.command}: {found.describe()}", file=sys.stderr)
            code = code or EXIT_NOT_DURABLE
    return code


async def track(
    client: Any,
    args: argparse.Namespace,
    entries: list[tuple[str, str, Label]],
    watched: list[tuple[str, str, str]],
    since: dict[str, str],
    deadline: float,
) -> dict[str, Tracker]:
    """Each input stream's Tracker, once every entry has an outcome or `deadline` passed."""
    trackers = {}
    for stream, _output, _dead_letter in watched:
        trackers[stream] = Tracker(stream, [(e, label) for s, e, label in entries if s == stream])
    await asyncio.gather(
        *(
            wait(
                client,
                trackers[stream],
                {k: since[k] for k in (output, dead_letter)},
                output,
                dead_letter,
                max(0.0, deadline - time.monotonic()),
            )
            for stream, output, dead_letter in watched
        )
    )
    return trackers


async def confirm(
    client: Any,
    args: argparse.Namespace,
    entries: list[tuple[str, str, Label]],
    trackers: dict[str, Tracker],
    deadline: float,
) -> list[Durability]:
    """With --durable, once every entry has an outcome: each input stream's commits on disk
    (up to its last appended entry: its commit is the last of theirs), D85."""
    if not getattr(args, "durable", False):
        return []
    if any(t.exit_code() == EXIT_TIMEOUT for t in trackers.values()):
        return []  # not applied yet: nothing to make durable
    last: dict[str, str] = {}
    for stream, entry_id, _ in entries:
        if stream not in last or entry_order(entry_id) > entry_order(last[stream]):
            last[stream] = entry_id
    return list(
        await asyncio.gather(
            *(
                confirm_durable(
                    client, stream, entry_id, max(0.001, deadline - time.monotonic()), args.replicas
                )
                for stream, entry_id in last.items()
            )
        )
    )


def add_wait_options(p: argparse.ArgumentParser) -> None:
    """--wait / --no-wait, --durable, --replicas, --timeout, --output-stream,
    --dead-letter-stream."""
    p.add_argument(
        "--wait",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="after appending, wait until each entry is rated or rejected and print the outcome: the "
        "changes as a table, or the reason. Default: wait when standard output is a terminal, "
        "not in a pipe or script (which gets the entry ids only). Exit status when waiting: "
        f"0 rated or duplicate, {EXIT_FAILED} rejected, {EXIT_TIMEOUT} no outcome within --timeout",
    )
    p.add_argument(
        "--durable",
        action="store_true",
        help="wait as --wait does, then until the commit is on disk: fsynced to the AOF of Redis "
        "(WAITAOF on Redis 7.2+ and Valkey; on older servers only with appendfsync always) and "
        "acknowledged by --replicas replicas; the outcomes are printed once it is. Exit status "
        f"{EXIT_NOT_DURABLE} when the server did not confirm it within --timeout, or cannot "
        "(appendfsync everysec without WAITAOF, appendonly no): one line says why",
    )
    p.add_argument(
        "--replicas",
        type=_count,
        default=None,
        metavar="N",
        help="with --durable, the replicas that must acknowledge the commit (fsynced with "
        "WAITAOF, received with WAIT; default: every replica connected to the master)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"how long --wait waits (default: {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--output-stream",
        help="where the results come (default: the partition's, RATING_OUTPUT_STREAM: "
        "ratings.updated in the single layout)",
    )
    p.add_argument(
        "--dead-letter-stream",
        help="where rejections come (default: the partition's, "
        "RATING_DEAD_LETTER_STREAM: events.rejected in the single layout)",
    )


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r}: give a positive number of seconds")
    return seconds


def _count(value: str) -> int:
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of replicas") from None
    if count < 0:
        raise argparse.ArgumentTypeError(f"{value!r}: give 0 or more replicas")
    return count
