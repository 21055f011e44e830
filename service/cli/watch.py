"""`rating-service watch`: ratings.updated messages as tables, for tournament directors;
with `--rejected`, the dead letters (event.rejected/v1). The rendering here is shared by
`publish --wait` (service/cli/wait.py) and `rejected` (service/cli/rejected.py).

Redis going away (a restart, a cut connection) does not end it: one line when it is lost,
reads tried again with backoff, each stream resumed after the last entry read (so nothing
is missed or shown twice), one line when Redis answers again (_Reconnecting; D27)."""

from __future__ import annotations

import argparse
import asyncio
import select
import signal
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from schemas.ratings import PlayerResult, RatingsUpdated
from schemas.rejected import EventRejected
from service.cli.errors import EXIT_OK, EXIT_TIMEOUT
from service.cli.redisclient import run_redis
from service.cli.settings import REDIS_HELP
from service.formats import reports
from service.runtime.keys import StreamKeys
from service.runtime.store import DATA_FIELD, decode_record

_decoder = msgspec.json.Decoder(RatingsUpdated)
_any_decoder = msgspec.json.Decoder(RatingsUpdated | EventRejected)
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports it (128 + SIGINT)
WATCH_TIMEOUT_MARGIN_S = 10.0  # socket timeout of watch's connection = --block-ms + this
RECONNECT_FIRST_S, RECONNECT_MAX_S = 0.1, 5.0  # the backoff of reads tried again (D27)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _change(result: PlayerResult) -> str:
    return reports.signed(result.change)


def _projected(result: PlayerResult) -> str:
    details = result.details
    projected = getattr(details, "projected_rating", None)
    return "-" if projected is None else f"{projected} (projected)"


def render(
    message: RatingsUpdated,
    previous: RatingsUpdated | None = None,
    known: Mapping[str, str] | None = None,
) -> str:
    """One message as a heading (with the event's name and dates, where the message has
    them) and a table of its players, each id with its name: the message's, else the one
    `known` (the store's, for a list message, which carries none); no name column when no
    name is known (the heading and the table layout are service.formats.reports'). A
    revision says why, and, when `previous` (the last message seen for the same event) is
    given, what changed: each player's new rating as it was published before -> as it is
    now."""
    lines = reports.heading(message) + reports.dates(message)
    if message.withdrawn:
        return "\n".join(lines)
    fide_event = message.system == "fide" and message.kind != "list"
    was = (
        {p.id: p.new_rating for p in previous.players}
        if previous is not None and message.kind == "revision"
        else None
    )
    names = dict(known or {})
    names.update({p.id: p.name for p in (previous.players if previous else ()) if p.name})
    names.update({p.id: p.name for p in message.players if p.name})
    headers = ["player", "name", "old", "new", "change", "status", "games", "event", "score"]
    if was is not None:
        headers.append("published before -> now")
    if fide_event:
        headers.append("projection")
    rows = [_row(p, names, was, fide_event) for p in message.players]
    if was is not None:
        rows.extend(
            [
                gone,
                reports.cut(names.get(gone, "")),
                *["-"] * 3,
                "",
                *["-"] * 3,
                "no longer in this result",
                *([""] if fide_event else []),
            ]
            for gone in sorted(set(was) - {p.id for p in message.players})
        )
    if not any(row[1] for row in rows):
        headers.pop(1)
        rows = [row[:1] + row[2:] for row in rows]
        lines.extend(table(headers, rows, left=(0, 4)))
    else:
        lines.extend(table(headers, rows))
    return "\n".join(lines)


async def store_names(client: Any, input_stream: str, message: RatingsUpdated) -> dict[str, str]:
    """The names the store's records give the players a message names none for (a list
    message carries no names): one HMGET of the pool's records, in the stream's slot."""
    wanted = [p.id for p in message.players if not p.name]
    if not wanted:
        return {}
    key = StreamKeys(input_stream).players(message.system, message.pool)
    records = [decode_record(raw) for raw in await client.hmget(key, wanted) if raw is not None]
    return {r.id: r.name for r in records if r.name}


def _row(
    p: PlayerResult, names: dict[str, str], was: dict[str, int | None] | None, fide_event: bool
) -> list[str]:
    """One player's row of `render`: id, name, figures, then what a revision changed (when
    `was` holds the earlier result's ratings) and a FIDE event's projection."""
    status = p.status if p.status == p.old_status else f"{p.old_status} -> {p.status}"
    row = [
        p.id,
        reports.cut(names.get(p.id, "")),
        _cell(p.old_rating),
        _cell(p.new_rating),
        _change(p),
        status,
        _cell(p.games),
        _cell(p.event_games),
        _cell(p.score),
    ]
    if was is not None:
        if p.id not in was:
            row.append("new in this result")
        elif was[p.id] == p.new_rating:
            row.append("unchanged")
        else:
            row.append(f"{_cell(was[p.id])} -> {_cell(p.new_rating)}")
    if fide_event:
        row.append(_projected(p))
    return row


def render_rejection(letter: EventRejected, letter_id: str | None = None) -> str:
    """One dead letter: what was refused and why, as the heading and a two-column table
    (reason, JSON path, the message for a person, where the entry came from)."""
    what = letter.event_id or "(no readable event id)"
    heading = f"{what}  REJECTED: {letter.reason}" + (
        f"  dead letter {letter_id}" if letter_id else ""
    )
    rows = rejection_rows(letter) + [["entry", f"{letter.source_id} of {letter.source_stream}"]]
    return "\n".join([heading, *fields_table(rows)])


def rejection_rows(letter: EventRejected) -> list[list[str]]:
    """Where (the JSON path, when the problem has one) and why (the message for a person)."""
    return ([["at", letter.path]] if letter.path else []) + [["why", letter.message]]


def fields_table(rows: list[list[str]]) -> list[str]:
    """Name / value rows, without a header line."""
    return table(["", ""], rows, left={0, 1})[1:]


def table(
    headers: list[str], rows: Iterable[list[str]], left: Iterable[int] = (0, 1, 5)
) -> list[str]:
    """reports.table with player ids, names and statuses (columns 0, 1 and 5) left-aligned
    by default."""
    return reports.table(headers, rows, left=left)


def decode(data: bytes) -> RatingsUpdated:
    return _decoder.decode(data)


def decode_any(data: bytes) -> RatingsUpdated | EventRejected:
    """A message of the output or the dead-letter stream, told apart by its `schema`."""
    return _any_decoder.decode(data)


def _reader_gone() -> bool:
    """True when standard output is a pipe whose reader has exited (`watch | head -1`).
    A write would fail then, but an idle stream brings no write: without this check watch
    would wait for the next message before noticing. poll() reports POLLERR on such a pipe."""
    poll = getattr(select, "poll", None)
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False  # no descriptor (captured output): nothing to check
    if poll is None:
        return False
    poller = poll()
    poller.register(fd, 0)  # no events asked: only POLLERR / POLLHUP / POLLNVAL come back
    return any(events & select.POLLERR for _, events in poller.poll(0))


class _Stop:
    """Ctrl-C (SIGINT) and SIGTERM (`docker stop`, Kubernetes) end watch quietly: 130 and 0.

    The loop's own handlers, not asyncio.run's: (1) in a container watch is process 1, and
    the kernel drops a signal that process 1 has no handler for, so without one `docker
    compose down` waits 10 s and SIGKILLs; (2) on Python 3.11 a cancellation that lands
    while redis-py sends a command under `asyncio.wait_for` (it does whenever there is a
    socket timeout) can be swallowed (CPython issue 86296 / bpo-42130, fixed in 3.12), and
    Ctrl-C then did nothing. So the task is cancelled again every 0.25 s until the
    cancellation has arrived."""

    RETRY_S = 0.25

    def __init__(self) -> None:
        self.signal: int | None = None
        self.arrived = False
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._installed: list[int] = []

    def __enter__(self) -> _Stop:
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._loop.add_signal_handler(signum, self._on_signal, signum)
                self._installed.append(signum)
            except (
                NotImplementedError,
                RuntimeError,
                ValueError,
            ):  # not the main thread, or no signals
                pass
        return self

    def __exit__(self, *exc: object) -> None:
        self.arrived = True  # no more cancelling: the connection is closed next
        for signum in self._installed:
            self._loop.remove_signal_handler(signum)

    def _on_signal(self, signum: int) -> None:
        if self.signal is None:
            self.signal = signum
            self._cancel()

    def _cancel(self) -> None:
        if not self.arrived and self._task is not None and not self._task.done():
            self._task.cancel()
            self._loop.call_later(self.RETRY_S, self._cancel)

    def took(self) -> bool:
        """In an `except CancelledError`: True when the cancellation is ours (then it is
        cleared and the task goes on to close the connection), False to re-raise it."""
        if self.signal is None:
            return False
        self.arrived = True
        while self._task is not None and self._task.uncancel() > 0:
            pass
        return True


def cmd_watch(args: argparse.Namespace) -> int:
    """watch: follow the output stream and print each message as a table."""
    watching = _Watching(args)
    # Each XREAD blocks up to --block-ms on purpose, and redis-py's default socket timeout
    # (5 s) equals the default block: an idle stream would end the command with "Timeout
    # reading". Wait for the block plus a margin (a Redis that stops answering is still
    # noticed); --block-ms 0 blocks without end, so no timeout then.
    timeout = None if args.block_ms == 0 else args.block_ms / 1000 + WATCH_TIMEOUT_MARGIN_S
    run_redis(args, watching.follow, socket_timeout=timeout)
    return watching.exit_status()


class _Watching:
    """One `watch`: the streams followed, the messages shown so far, and the signal that
    stopped it (_Stop), if one did."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.shown = 0
        self.names: list[str] = []
        self.stopped_by: int | None = None

    async def follow(self, client: Any) -> None:
        """Read until --count messages came, every reader ended, or a signal stopped it."""
        with _Stop() as stop:
            try:
                await self.read(client)
            except asyncio.CancelledError:
                if not stop.took():
                    raise
            self.stopped_by = stop.signal

    async def read(self, client: Any) -> None:
        """One reader per stream (_follow_one) puts entries on a queue; each is shown in
        turn. A reader's error goes up; with --count, all readers ending (a wait of
        --block-ms brought nothing on any stream) ends the read."""
        args = self.args
        self.names.extend(await _streams(client, args))
        arrived: asyncio.Queue = asyncio.Queue(maxsize=1_000)
        away = _Reconnecting(args)
        readers = [
            asyncio.create_task(_follow_one(client, args, stream, arrived, away))
            for stream in self.names
        ]
        # per event: the last message shown (what a revision changes)
        last_of: dict[str, RatingsUpdated] = {}
        try:
            while args.count is None or self.shown < args.count:
                getting = asyncio.ensure_future(arrived.get())
                await asyncio.wait([getting, *readers], return_when=asyncio.FIRST_COMPLETED)
                if not getting.done():
                    getting.cancel()
                    _raise_reader_error(readers)
                    if all(reader.done() for reader in readers) and arrived.empty():
                        return  # --count: nothing more within the wait on any stream
                    readers = [r for r in readers if not r.done()]
                    continue
                entry_id, fields = getting.result()
                await _show(client, entry_id, fields, last_of)
                self.shown += 1
        finally:
            away.stopping = True  # a read cut short from here on is the client closing
            await _stop_readers(readers)

    def exit_status(self) -> int:
        """130 after Ctrl-C; EXIT_TIMEOUT (said on standard error) when --count messages
        did not come within --block-ms; else 0."""
        args = self.args
        if self.stopped_by == signal.SIGINT:
            return EXIT_INTERRUPTED
        if self.stopped_by is None and args.count is not None and self.shown < args.count:
            print(
                f"rating-service watch: {self.shown} of {args.count} message(s) on {', '.join(self.names)} within "
                f"{args.block_ms} ms",
                file=sys.stderr,
            )
            return EXIT_TIMEOUT
        return EXIT_OK


async def _show(
    client: Any, entry_id: str, fields: dict, last_of: dict[str, RatingsUpdated]
) -> None:
    """Print one entry: a dead letter, or a ratings.updated table (a revision compared
    with `last_of` its event, which this one then becomes; a list with the store's names);
    one line on standard error for an entry that is neither."""
    try:
        message = decode_any(fields[DATA_FIELD.encode()])
    except (KeyError, msgspec.ValidationError, msgspec.DecodeError) as exc:
        print(
            f"{entry_id}: not a ratings.updated/v1 or event.rejected/v1 message ({exc})",
            file=sys.stderr,
        )
        return
    if isinstance(message, EventRejected):
        print(render_rejection(message, entry_id) + "\n", flush=True)
        return
    previous = last_of.get(message.event_id) if message.event_id else None
    known = await _list_names(client, message) if message.kind == "list" else None
    print(render(message, previous, known) + "\n", flush=True)
    if message.event_id and message.kind != "list":
        last_of[message.event_id] = message


async def _list_names(client: Any, message: RatingsUpdated) -> dict[str, str]:
    """The store's names for a list message's players: the records of the partition its
    pool is routed to (service/cli/routing.py); none when the layout cannot be read."""
    from service.cli.errors import UserError
    from service.cli.routing import layout_for

    try:
        partition = (await layout_for(client, None)).route(message.system, message.pool)
    except (UserError, ValueError, KeyError):
        return {}
    return await store_names(client, partition.input, message)


def _raise_reader_error(readers: list[asyncio.Task]) -> None:
    """The error of the first reader that ended with one, raised here."""
    for reader in readers:
        if reader.done() and reader.exception() is not None:
            raise reader.exception()  # type: ignore[misc]  # exception() is not None: checked on the line above


async def _stop_readers(readers: list[asyncio.Task]) -> None:
    """Cancel the readers, give them a moment to end, and retrieve their errors (_quietly)."""
    for reader in readers:
        reader.cancel()
    # Not waited for without end: on Python 3.11 a cancellation can be swallowed by
    # redis-py's blocked read (see _Stop); the process ends anyway.
    await asyncio.wait(readers, timeout=0.5)
    for reader in readers:
        reader.add_done_callback(_quietly)


async def _streams(client: Any, args: argparse.Namespace) -> list[str]:
    """--stream, else every partition's output (--rejected: dead-letter) stream."""
    if args.stream:
        return [args.stream]
    from service.cli.routing import layout_for

    layout = await layout_for(client, None)
    return list(
        dict.fromkeys(p.dead_letter if args.rejected else p.output for p in layout.partitions)
    )


def _quietly(task: asyncio.Task) -> None:
    """Retrieve a stopped reader's error (the client closed under it): nothing to say then."""
    if not task.cancelled():
        task.exception()


class _Reconnecting:
    """Redis lost under the readers (D27): said once per outage on standard error, however
    many streams are followed, and once when it answers again. With --count an outage
    longer than --block-ms (not 0) ends watch with the error, as a read that brought nothing
    within it would."""

    def __init__(self, args: argparse.Namespace) -> None:
        from service.cli.settings import redis_url

        self.raw_url = redis_url(args)
        self.bound = args.block_ms / 1000 if args.count is not None and args.block_ms else None
        self.since: float | None = None
        self.stopping = False  # watch is ending: errors are the client closing, not Redis

    @property
    def url(self) -> str:
        from service.runtime.settings import redact

        return redact(self.raw_url)

    def reason(self, exc: BaseException) -> str:
        """The error's type and text, without the URL's password."""
        from service.runtime.settings import redact_error

        text = redact_error(exc, self.raw_url)
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    def lost(self, exc: BaseException) -> float:
        """A read failed because Redis is away: say so if it is news; how long it has been."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
            print(
                f"rating-service watch: lost Redis at {self.url} ({self.reason(exc)}); reconnecting",
                file=sys.stderr,
                flush=True,
            )
        if self.bound is not None and now - self.since > self.bound:
            raise exc
        return now - self.since

    def answers(self) -> None:
        """A read succeeded: say so if Redis was away."""
        if self.since is not None:
            away = time.monotonic() - self.since
            self.since = None
            print(
                f"rating-service watch: Redis at {self.url} answers again after {away:.1f} s; "
                "following on from the last message read",
                file=sys.stderr,
                flush=True,
            )


async def _read_retrying(
    client: Any, stream: str, last: str, args: argparse.Namespace, away: _Reconnecting
) -> list:
    """One XREAD of `stream` after `last`; while Redis is away, tried again with backoff
    (0.1 s doubling to 5 s) until it answers."""
    from service.runtime.connection import TRANSIENT, is_connection_race, xread

    delay = RECONNECT_FIRST_S
    while True:
        try:
            if away.since is not None:  # said back at once, not after a blocked read
                await client.ping()
                away.answers()
            reply = await xread(
                client, {stream: last}, block=args.block_ms, count=100
            )  # on a cluster: on its owner
        except (*TRANSIENT, AttributeError) as exc:
            if away.stopping or (isinstance(exc, AttributeError) and not is_connection_race(exc)):
                raise
            away.lost(exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)
            continue
        return reply


async def _follow_one(
    client: Any,
    args: argparse.Namespace,
    stream: str,
    arrived: asyncio.Queue,
    away: _Reconnecting,
) -> None:
    """Put each entry of `stream` on `arrived`, from the start or from now, in stream order
    (one reader per stream: on a Redis Cluster the partitions' streams are in other slots).
    With --count, ends after a read that waited --block-ms for nothing. A read that Redis
    going away cut short is tried again after the same entry (_read_retrying)."""

    if args.from_start:
        last = "0-0"
    else:
        # From the newest entry now, by id: reading "$" again after each empty block
        # would miss an entry added between two reads.
        newest = await client.xrevrange(stream, count=1)
        last = newest[0][0].decode() if newest else "0-0"
    while True:
        reply = await _read_retrying(client, stream, last, args, away)
        if not reply:
            if args.count is not None:
                return
            if _reader_gone():
                raise BrokenPipeError("standard output: its reader has gone")
            continue
        for raw_id, fields in reply[0][1]:
            last = raw_id.decode()
            await arrived.put((last, fields))


def register(commands: Any) -> None:
    """Add watch to the command line."""
    p = commands.add_parser(
        "watch",
        help="follow ratings.updated and print each event's changes as a table (--rejected: the dead letters)",
        description="Follow the output stream and print each message as a table; with --rejected, the "
        "dead-letter stream (what the service refused, and why). Redis lost (a restart, a cut "
        "connection): one line, reads tried again with backoff, on from the last message read, one "
        "line when it answers again (with --count, an outage longer than --block-ms ends watch, exit 2). "
        f"Exit status: 0; 130 after Ctrl-C; {EXIT_TIMEOUT} when --count messages did not come within "
        "--block-ms.",
    )
    p.add_argument(
        "--rejected",
        action="store_true",
        help="follow the dead-letter stream (RATING_DEAD_LETTER_STREAM, default events.rejected) instead",
    )
    p.add_argument(
        "--stream",
        help="the one stream to follow (default: every partition's output stream, "
        "RATING_OUTPUT_STREAM: ratings.updated in the single layout; with --rejected "
        "their dead-letter streams); either kind of message is shown",
    )
    p.add_argument("--from-start", action="store_true", help="show the messages already there too")
    p.add_argument(
        "--count",
        type=int,
        help=f"stop after this many messages; exit {EXIT_TIMEOUT} when fewer came within --block-ms",
    )
    p.add_argument(
        "--block-ms",
        type=int,
        default=5000,
        help="how long one read waits (default: 5000; 0: without end). Without --count, watch "
        "waits for new messages until Ctrl-C however long the stream stays idle",
    )
    p.add_argument("--redis-url", help=REDIS_HELP)
    p.set_defaults(func=cmd_watch)
