"""A small TCP proxy of the tests' own, between the service and Redis, that can cut every
connection at once (the service then sees connection resets mid-command), or drop what Redis
sends (`dropping`: a replica behind it stops receiving its master's stream)."""

from __future__ import annotations

import asyncio
import random
import socket


def reset(connections: set[asyncio.StreamWriter]) -> None:
    """Close every connection with a reset (RST, not a clean close) and forget them."""
    for writer in list(connections):
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
            except OSError:
                pass
        writer.close()
    connections.clear()


class CuttingProxy:
    def __init__(
        self,
        target_host: str,
        target_port: int,
        cut_on: bytes = b"",
        cut_occurrences: frozenset = frozenset(),
        stall_occurrences: frozenset = frozenset(),
    ):
        """`cut_on` / `cut_occurrences`: also cut everything when a client sends the n-th
        command containing `cut_on` (n counted from 1), for each n in `cut_occurrences`;
        `stall_occurrences`: hold that command instead (never forwarded, never answered),
        and set `stalled`."""
        self.target = (target_host, target_port)
        self.cut_on = cut_on
        self.cut_occurrences = cut_occurrences
        self.stall_occurrences = stall_occurrences
        self.stalled = asyncio.Event()
        self._closing = asyncio.Event()
        self.seen = 0
        self.server: asyncio.AbstractServer | None = None
        self.port = 0
        self.connections: set[asyncio.StreamWriter] = set()
        self.cuts = 0
        self.dropping = False  # drop what the target sends (a one-way partition)

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self._closing.set()
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    def cut(self) -> None:
        """Reset every open connection (RST, not a clean close)."""
        reset(self.connections)
        self.cuts += 1

    async def cut_at_random(
        self, rng: random.Random, low: float, high: float, until: asyncio.Event
    ) -> None:
        while not until.is_set():
            await asyncio.sleep(rng.uniform(low, high))
            self.cut()

    async def _accept(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            return
        self.connections.update((client_writer, upstream_writer))
        await asyncio.gather(
            self._pipe(client_reader, upstream_writer, watch=True),
            self._pipe(upstream_reader, client_writer),
            return_exceptions=True,
        )
        for writer in (client_writer, upstream_writer):
            self.connections.discard(writer)
            writer.close()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, watch: bool = False
    ) -> None:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if watch and self.cut_on and self.cut_on in data:
                self.seen += data.count(self.cut_on)
                if self.seen in self.cut_occurrences:
                    self.cut()  # the command never reaches Redis
                    break
                if self.seen in self.stall_occurrences:
                    self.stalled.set()
                    await self._closing.wait()  # nor here: the client waits for its answer
                    break
            if self.dropping and not watch:
                continue  # the target's bytes are lost on the way
            writer.write(data)
            await writer.drain()
        writer.close()
