"""Commands packed by hiredis (C) instead of redis-py's asyncio connection (pure Python).

redis-py's synchronous client packs with hiredis when it is installed; its asyncio client
(8.1) does not: `AbstractConnection.pack_command` encodes and frames every argument in
Python, about a sixth of the service's time per commit (`rating-service bench --profile`).
`use_hiredis_packing(client)` gives a client's connection pool a connection class that packs
with `hiredis.pack_command` and falls back to redis-py's own packing for what hiredis does not
take (a memoryview, or a type both refuse: redis-py then raises its DataError), for a
command of very many arguments (LARGE_COMMAND) and for one with a large argument
(LARGE_ARGUMENT: redis-py sends it without a copy), and is not used for a client whose
encoding is not strict UTF-8 (hiredis encodes text as strict UTF-8). The bytes on the wire
are the same (tests/unit/test_packing.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

try:
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # hiredis is a dependency (redis[hiredis]); without it, redis-py packs
    _hiredis_pack = None  # type: ignore[assignment]  # None says: no hiredis

_classes: dict[type, type] = {}
# A command with more arguments than this (a correction's cascade writes thousands of records,
# history members and read-model lines per command) is packed by redis-py: its pieces of at
# most 6 kB keep the peak memory lower than hiredis's one buffer per command (measured: a
# cascade of 9,999 events peaked 35 MB higher with hiredis packing every command; at 2,000
# the 64x7 events' commits lost a seventh of their throughput).
LARGE_COMMAND = 20_000
# A command of a few arguments, one longer than this (a 40-player event's message on the
# output stream: ~62 kB of JSON), is packed by redis-py too: it sends such an argument as it
# is, where hiredis copies it into the command's buffer. A cascade's 432 revisions are 27 MB,
# held twice until they were sent: fresh memory, paid in page faults (D139). (The commands of
# many arguments are not looked at: 160,000 arguments of a cascade's commit.)
LARGE_ARGUMENT = 16_384
FEW_ARGUMENTS = 64  # only a command of at most so many is looked at for a large argument
SEND_GROUP = 1 << 20  # bytes written to the socket (and drained) at a time


class HiredisPacking:
    """Mixin for a redis.asyncio connection class: pack_command / pack_commands by hiredis."""

    def pack_command(self, *args: Any) -> list[bytes]:
        if len(args) > LARGE_COMMAND or (
            len(args) <= FEW_ARGUMENTS
            and any(type(a) is bytes and len(a) > LARGE_ARGUMENT for a in args)
        ):
            return super().pack_command(*args)  # type: ignore[misc]  # a mixin: super() is the connection class it is mixed into
        name = args[0]
        if isinstance(name, str):  # "CONFIG GET": the words go as separate arguments (as redis-py)
            if " " in name:
                args = (*name.encode().split(), *args[1:])
        elif isinstance(name, bytes) and b" " in name:
            args = (*name.split(), *args[1:])
        try:
            return [_hiredis_pack(args)]
        except TypeError:  # a memoryview, or a bool / None (redis-py's DataError says which)
            return super().pack_command(*args)  # type: ignore[misc]  # a mixin: super() is the connection class it is mixed into

    def pack_commands(self, commands: Iterable[Iterable[Any]]) -> list[bytes]:
        """Each command's pieces, not joined: send_packed_command writes them in groups."""
        return [piece for command in commands for piece in self.pack_command(*command)]

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        """Send the pieces in groups of about SEND_GROUP bytes, each written and drained by
        redis-py's own send_packed_command (its error handling: a failure drops the
        connection, so a half-sent MULTI is discarded by the server). One join of a whole
        pipeline (asyncio's writelines joins its list) and the transport's copy of it would
        otherwise hold a large commit (a correction's cascade: tens of MB) two or three times."""
        if not isinstance(command, list) or len(command) < 2:
            await super().send_packed_command(command, check_health)  # type: ignore[misc]  # a mixin: super() is the connection class it is mixed into
            return
        group: list[bytes] = []
        size = 0
        for piece in command:
            group.append(piece)
            size += len(piece)
            if size >= SEND_GROUP:
                await super().send_packed_command(group, check_health)  # type: ignore[misc]  # a mixin: super() is the connection class it is mixed into
                check_health = False
                group, size = [], 0
        if group:
            await super().send_packed_command(group, check_health)  # type: ignore[misc]  # a mixin: super() is the connection class it is mixed into


def packed_class(connection_class: type) -> type:
    """`connection_class` with HiredisPacking (one subclass per class, made once)."""
    if issubclass(connection_class, HiredisPacking):
        return connection_class
    found = _classes.get(connection_class)
    if found is None:
        found = _classes[connection_class] = type(
            f"Hiredis{connection_class.__name__}", (HiredisPacking, connection_class), {}
        )
    return found


def use_hiredis_packing(client: Any) -> Any:
    """Make `client` (a redis.asyncio.Redis) pack its commands with hiredis, for the
    connections its pool opens from now on; returns it. Without hiredis: unchanged."""
    pool = getattr(client, "connection_pool", None)
    if _hiredis_pack is None or pool is None:
        return client
    options = pool.connection_kwargs
    encoding = str(options.get("encoding", "utf-8")).lower().replace("-", "").replace("_", "")
    if encoding == "utf8" and options.get("encoding_errors", "strict") == "strict":
        pool.connection_class = packed_class(pool.connection_class)
    return client
