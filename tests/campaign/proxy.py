"""The network between the service and Redis, as the fault campaign breaks it: a TCP proxy on
loopback (docs/operations/faults.md "Faults", D96).

Loopback TCP loses no packets, so each fault is made where an application sees it:

- `cut()`: every open connection reset (RST), mid-command or not.
- `latency`: every chunk each way waits this many seconds before it is forwarded.
- `loss`: the chance that a chunk waits `RETRANSMIT` seconds first, as a lost segment waits
  for its retransmission (Linux's least retransmission timeout is 200 ms).
- `hold()` / `release()`: a silent partition, both ways: nothing forwarded, nothing reset, until
  released (a firewall dropping packets; the connection lives on once it heals).
- `drop(way)`: a one-way partition: what the client sends (`"up"`) or what Redis answers
  (`"down"`) is thrown away; the connections are reset when it heals, since a byte stream with
  a gap in it is no longer the protocol (TCP would have kept retransmitting instead).
- `refuse`: new connections are refused while set (Redis unreachable).
"""

from __future__ import annotations

import asyncio
import random

from tests.integration.tcpproxy import reset

RETRANSMIT = 0.2  # seconds


class FaultyProxy:
    def __init__(self, target_port: int, rng: random.Random, target_host: str = "127.0.0.1"):
        self.target = (target_host, target_port)
        self.rng = rng
        self.server: asyncio.AbstractServer | None = None
        self.port = 0
        self.connections: set[asyncio.StreamWriter] = set()
        self.latency = 0.0
        self.loss = 0.0
        self.dropping: set[str] = set()  # "up", "down"
        self.refuse = False
        self._flowing = asyncio.Event()
        self._flowing.set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self.heal()
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    def heal(self) -> None:
        """Every fault lifted: no latency, no loss, flowing both ways, connections accepted (a
        one-way partition's connections reset, see the module's docstring)."""
        self.latency = self.loss = 0.0
        self.refuse = False
        self.release()
        if self.dropping:
            self.dropping.clear()
            self.cut()

    def cut(self) -> None:
        """Reset every open connection (RST, not a clean close)."""
        reset(self.connections)

    def hold(self) -> None:
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    def drop(self, way: str) -> None:
        self.dropping.add(way)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refuse:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.connections.update((writer, up_writer))
        await asyncio.gather(
            self._pipe(reader, up_writer, "up"),
            self._pipe(up_reader, writer, "down"),
            return_exceptions=True,
        )
        for end in (writer, up_writer):
            self.connections.discard(end)
            end.close()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, way: str
    ) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await self._flowing.wait()
                if self.latency:
                    await asyncio.sleep(self.latency)
                if self.loss and self.rng.random() < self.loss:
                    await asyncio.sleep(RETRANSMIT)
                if way in self.dropping:
                    continue
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()
