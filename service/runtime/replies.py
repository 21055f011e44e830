"""Redis replies as text: a client without `decode_responses` (the service's) answers bytes,
one with it (a test's, a caller's own) answers str; `text` takes either.

Imports nothing (not even redis): the store and the offline commands read replies through
it too.
"""

from __future__ import annotations

from typing import overload


@overload
def text(value: bytes | str) -> str: ...
@overload
def text(value: None) -> None: ...
@overload
def text(value: bytes | str | None) -> str | None: ...


def text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value
