"""uvicorn, serving the ASGI app inside the service's own event loop.

The service owns the process: uvicorn installs no signal handlers here (its `serve()` would;
this runs `startup`, `main_loop` and `shutdown` itself), configures no logging (its lines
go through the root logger into structlog's JSON) and has no lifespan. The listening socket
is bound here, so that a taken port is an OSError the service reports in one line (uvicorn
would log and `sys.exit(1)`). With an operators' port (D31) the one server listens on both
sockets; the app tells them apart by the port a request came in on (edge.py). A request the
HTTP parser refuses gets the app's own 400, JSON or the HTML page (badrequest.py, D51)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn

from service.web.badrequest import protocol_for

GRACE_SECONDS = 5  # open requests get this long to finish when the service stops


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free one). Raises OSError."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(2048)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class AdminPortProblem(OSError):
    """The operators' port cannot be bound (the OSError's errno and text are its cause's)."""


class HttpServer:
    """`start()` binds and serves; `port` is the bound port (`admin_port` the operators' one,
    when asked for); `stop()` ends it gracefully."""

    def __init__(
        self, app: Any, host: str, port: int, admin_host: str = "", admin_port: int | None = None
    ):
        self.host = host
        self.port = port
        self.admin_host = admin_host
        self.admin_port = admin_port
        self.config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_config=None,
            access_log=False,
            lifespan="off",
            http=protocol_for(app),
            ws="none",
            server_header=False,
            timeout_graceful_shutdown=GRACE_SECONDS,
        )
        self.server = uvicorn.Server(self.config)
        self._sockets: list[socket.socket] = []
        self._loop: asyncio.Task | None = None

    async def start(self) -> None:
        """Bind (OSError; AdminPortProblem for the operators' port) and serve."""
        self._sockets = [listen(self.host, self.port)]
        self.port = self._sockets[0].getsockname()[1]
        if self.admin_port is not None:
            try:
                self._sockets.append(listen(self.admin_host, self.admin_port))
            except OSError as exc:
                self._sockets.pop().close()
                raise AdminPortProblem(exc.errno, exc.strerror) from exc
            self.admin_port = self._sockets[1].getsockname()[1]
        self.config.load()
        self.server.lifespan = self.config.lifespan_class(self.config)
        await self.server.startup(sockets=self._sockets)
        self._loop = asyncio.create_task(self.server.main_loop(), name="http")

    async def stop(self) -> None:
        if self._loop is None:
            for sock in self._sockets:
                sock.close()
            return
        self.server.should_exit = True
        await asyncio.gather(self._loop, return_exceptions=True)
        self._loop = None
        await self.server.shutdown(sockets=self._sockets or None)
