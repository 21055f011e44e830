"""Every 200 answer of the API and the pages, with its validators: a strong `ETag` (a
digest of the body), `Last-Modified` (the data's last update, when known) and
`Cache-Control: no-cache` (a cache keeps it, and asks again each time); a request whose
`If-None-Match` names the current ETag gets 304 with no body, and so does one without
`If-None-Match` whose `If-Modified-Since` is at or after `Last-Modified` (RFC 9110 13.1.3,
13.2.2: If-None-Match takes precedence; an unreadable date is ignored)."""

from __future__ import annotations

import datetime as dt
import hashlib
from email.utils import format_datetime, parsedate_to_datetime

import msgspec
from starlette.requests import Request
from starlette.responses import Response

JSON = "application/json"
HTML = "text/html; charset=utf-8"


def etag_of(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def http_date(moment: dt.datetime) -> str:
    """RFC 9110 IMF-fixdate; a naive time is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return format_datetime(moment.astimezone(dt.UTC).replace(microsecond=0), usegmt=True)


def matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: `*`, or any listed tag equal by the weak comparison."""
    if not if_none_match:
        return False
    tags = [tag.strip() for tag in if_none_match.split(",")]
    return "*" in tags or any(tag.removeprefix("W/") == etag for tag in tags)


def not_modified_since(if_modified_since: str | None, last_modified: dt.datetime | None) -> bool:
    """RFC 9110 13.1.3: whether the data has not changed since the client's copy (the
    comparison at the one-second resolution of HTTP dates); False without a usable date."""
    if not if_modified_since or last_modified is None:
        return False
    try:
        since = parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError):
        return False
    if since.tzinfo is None:  # an RFC 850 or asctime date: GMT by definition
        since = since.replace(tzinfo=dt.UTC)
    if last_modified.tzinfo is None:
        last_modified = last_modified.replace(tzinfo=dt.UTC)
    return last_modified.replace(microsecond=0) <= since


def fresh(request: Request, etag: str, last_modified: dt.datetime | None) -> bool:
    """Whether the client's copy is current: by If-None-Match when there is one, else by
    If-Modified-Since (RFC 9110 13.2.2), for a GET (HEAD comes in as GET: edge.py)."""
    if request.method != "GET":
        return False
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        return matches(if_none_match, etag)
    return not_modified_since(request.headers.get("if-modified-since"), last_modified)


def cached(
    request: Request, body: bytes, media_type: str, last_modified: dt.datetime | None
) -> Response:
    """The 200 answer with its validators, or 304 when the client holds this body already."""
    etag = etag_of(body)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if last_modified is not None:
        headers["Last-Modified"] = http_date(last_modified)
    if fresh(request, etag, last_modified):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)


def cached_json(
    request: Request, answer: msgspec.Struct, last_modified: dt.datetime | None
) -> Response:
    return cached(request, msgspec.json.encode(answer), JSON, last_modified)
