"""Redis replies as text: a client without `decode_responses` (the service's) answers bytes,
one with it (a test's, a caller's own) answers str; `text` takes either.

Imports nothing (not even redis): the store and the offline commands read replies through
it too.
"""

from __future__ import annotations

import datetime as dt
from typing import overload


@overload
def text(value: bytes | str) -> str: ...
@overload
def text(value: None) -> None: ...
@overload
def text(value: bytes | str | None) -> str | None: ...


def text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def moment(ms: bytes | str | int | None) -> dt.datetime | None:
    """A time kept in ms (a pool's last update) as a UTC datetime to the second."""
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(int(ms) / 1000, tz=dt.UTC).replace(microsecond=0)
