"""The service's HTTP side: liveness, readiness, Prometheus metrics, the AsyncAPI document.

A small asyncio server in the service's own event loop (no web framework):

    GET /health/live    200 while the process's event loop answers
    GET /health/ready   200 when Redis answers a PING within a second, else 503
    GET /metrics        Prometheus text format
    GET /asyncapi.json  the AsyncAPI 3 document of the channels
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable

from schemas import asyncapi
from service.runtime.metrics import Metrics
from service.runtime.settings import redact_error

Handler = Callable[[], Awaitable[tuple[int, str, bytes]]]
REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


class HealthServer:
    """Answers the probes and scrapes; `ready` asks Redis each time."""

    def __init__(self, client: Any, metrics: Metrics, host: str, port: int, redis_url: str = ""):
        self.client = client
        self.redis_url = redis_url
        self.metrics = metrics
        self.host = host
        self.port = port
        self._server: asyncio.AbstractServer | None = None
        self._asyncapi = asyncapi.render().encode()
        self.routes: dict[str, Handler] = {
            "/health/live": self.live,
            "/health/ready": self.ready,
            "/metrics": self.scrape,
            "/asyncapi.json": self.document,
        }

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def live(self) -> tuple[int, str, bytes]:
        return 200, "application/json", b'{"status":"live"}'

    async def redis_answers(self) -> str | None:
        """None when Redis answers a PING within a second, else why not."""
        try:
            await asyncio.wait_for(self.client.ping(), timeout=1.0)
        except Exception as exc:  # any failure means not ready; say which
            self.metrics.redis_up.set(0)
            text = redact_error(exc, self.redis_url)
            return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        self.metrics.redis_up.set(1)
        return None

    async def ready(self) -> tuple[int, str, bytes]:
        problem = await self.redis_answers()
        if problem is None:
            return 200, "application/json", b'{"status":"ready","redis":"ok"}'
        body = json.dumps({"status": "unready", "redis": problem}).encode()
        return 503, "application/json", body

    async def scrape(self) -> tuple[int, str, bytes]:
        return 200, "text/plain; version=0.0.4; charset=utf-8", self.metrics.render()

    async def document(self) -> tuple[int, str, bytes]:
        return 200, "application/json", self._asyncapi

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), timeout=5)
            while (await asyncio.wait_for(reader.readline(), timeout=5)) not in (b"\r\n", b"\n", b""):
                pass  # headers are not needed
            parts = request.decode("latin-1").split()
            if len(parts) < 2:
                return
            method, path = parts[0], parts[1].split("?", 1)[0]
            handler = self.routes.get(path)
            if handler is None:
                status, kind, body = 404, "text/plain", b"not found\n"
            elif method not in ("GET", "HEAD"):
                status, kind, body = 405, "text/plain", b"GET only\n"
            else:
                status, kind, body = await handler()
            head = (
                f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + (body if method == "GET" else b""))
            await writer.drain()
        except (asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
