"""The server's own 400 in the app's format (D51). A request the HTTP parser refuses never
reaches the app: uvicorn answered it `text/plain` "Invalid HTTP request received." (a raw
UTF-8 byte in the query, `GET /v1/pools/cfc/regular/players?q=ø` sent unencoded, or a
space in it). The protocol classes here keep the last bytes a connection received and
answer that 400 as the app answers any bad request: the API's ApiError JSON, or the HTML
error page for a page's path (errors.is_page_path), with the security headers (edge.py),
saying what to send instead. The connection is closed after, as uvicorn does."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import msgspec

from schemas.reads import ApiError
from service.web.caching import HTML, JSON

KEPT = 16 * 1024  # bytes of a connection's input kept for the answer (a request's head)
REQUEST_LINE = re.compile(rb"([A-Z]{3,10}) ([^\r\n]*?) HTTP/[0-9.]+\r?\n")
ACCEPT = re.compile(rb"\r?\naccept:[ \t]*([^\r\n]*)", re.IGNORECASE)


def what_is_wrong(target: bytes) -> str:
    """For a person: what in the request's target the parser refused, and what to send."""
    text = target.decode("utf-8", errors="replace")
    foreign = next((c for c in text if not c.isascii() or not c.isprintable()), None)
    if foreign is not None and foreign != "\ufffd":
        return (
            f"the request's target holds {foreign!r}, a character outside ASCII: send it "
            f"percent-encoded as UTF-8 ({quote(foreign)}), as browsers do"
        )
    if foreign is not None or any(b > 0x7E or b < 0x21 for b in target if b != 0x20):
        return "the request's target holds bytes outside printable ASCII: percent-encode them"
    if b" " in target:
        return "the request's target holds a space: send it as %20 (or + in a query)"
    return "not a valid HTTP/1.1 request"


def answer(state: Any, received: bytes, date_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole 400 answer (status line, headers, body) to the last request in `received`,
    for the app whose `app.state` is `state`."""
    from service.web.edge import pages_headers
    from service.web.errors import is_page_path
    from service.web.rendering import page_of

    found = list(REQUEST_LINE.finditer(received))
    method, target = (found[-1].group(1), found[-1].group(2)) if found else (b"GET", b"")
    message = what_is_wrong(target) if found else "not a valid HTTP/1.1 request"
    tail = received[found[-1].end() :] if found else b""
    accept = ACCEPT.search(tail)
    path = target.split(b"?", 1)[0].decode("latin-1")
    if is_page_path(path, accept.group(1).decode("latin-1") if accept else ""):
        body = page_of(state, "error.html", title="Bad request", message=message, status=400)
        media = HTML
    else:
        body = msgspec.json.encode(ApiError(error="bad_request", message=message))
        media = JSON
    look = getattr(state, "look", None)
    headers = [
        *date_headers,
        (b"content-type", media.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *pages_headers(look.logo_origin if look is not None else None),
    ]
    head = b"HTTP/1.1 400 Bad Request\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in headers)
    return head + b"\r\n" + (b"" if method == b"HEAD" else body)


class Answering:
    """Mixed into a uvicorn protocol class: keeps the input's last KEPT bytes, and answers
    the parser's 400 with `answer`."""

    site_state: Any = None
    transport: Any
    server_state: Any
    _received = b""

    def data_received(self, data: bytes) -> None:
        self._received = (self._received + data)[-KEPT:]
        super().data_received(data)  # type: ignore[misc]  # the uvicorn protocol's, after this mixin

    def send_400_response(self, msg: str) -> None:
        self.transport.write(
            answer(self.site_state, self._received, list(self.server_state.default_headers))
        )
        self.transport.close()


def protocol_for(app: Any, base: type | None = None) -> type:
    """uvicorn's HTTP protocol class (`base`; default httptools when installed, else h11),
    answering its own 400s for `app` (a FastAPI app: its `state`)."""
    if base is not None:
        return type("AnsweringProtocol", (Answering, base), {"site_state": app.state})
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # pragma: no cover - httptools is a dependency of uvicorn[standard]
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]
    return type("AnsweringProtocol", (Answering, Base), {"site_state": app.state})
