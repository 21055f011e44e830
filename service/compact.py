"""A compact encoding of the large values the store keeps (D100): the published results of
each event (`{S}:results`, `{S}:revisions`) and the packed player states of the histories
(`{S}:history:...`), deflated with a preset dictionary of the store's field names.

A compact value is `TAG`, a version byte, then a raw deflate stream (zlib, wbits -15) made
with that version's dictionary (service/compactdict.py). `TAG` is 0xC1, the one byte
MessagePack never uses, so a value that does not start with it is plain MessagePack, as an
earlier version wrote it, and is read as it is: a store needs no migration. A value is kept
compact only where that is shorter (a CFC player's 8-byte state stays as it is).

Pure: bytes in, bytes out.
"""

from __future__ import annotations

import zlib

from service.compactdict import V1

TAG = 0xC1  # "never used" in MessagePack: no MessagePack value starts with it
VERSION = 1
_HEAD = bytes((TAG, VERSION))
_DICTIONARIES = {VERSION: V1}
LEVEL = 6
SMALLEST = 24  # a shorter value is kept as it is: deflate's header and end cost ~4 bytes


class CompactError(ValueError):
    """A compact value this version cannot read (an unknown version, or damaged bytes)."""


# A compressor with the dictionary already loaded, copied for each value: the same bytes as
# a new one, without loading the 9 kB dictionary each time (a history state: 15 -> 9 µs).
# Its window of 16 kB and memory level 7 (zlib's state a third of 32 kB and 9's, so cheaper to
# copy) hold the dictionary and a value of up to 7 kB whole; the bytes are those of a window
# of 32 kB for every history state measured (5,000 of 5,000), and any window reads back.
_PRIMED = zlib.compressobj(LEVEL, zlib.DEFLATED, -14, 7, zlib.Z_DEFAULT_STRATEGY, V1)
# A value of LARGE bytes or more (an event's message of a dozen players and up) at level 3 and
# memory level 8 (D124, D144): zlib's fast path, half level 5's instructions (a 40x7 CFC message
# 3.13 -> 1.54 M) for 6-9 % more bytes (6.0 -> 6.5 kB). Any level reads back.
LARGE = 16_384
_PRIMED_LARGE = zlib.compressobj(3, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, V1)


def compact(raw: bytes) -> bytes:
    """`raw` (MessagePack) as stored: compact when that is shorter, else `raw` itself."""
    if len(raw) < SMALLEST:
        return raw
    deflate = _PRIMED_LARGE.copy() if len(raw) >= LARGE else _PRIMED.copy()
    packed = _HEAD + deflate.compress(raw) + deflate.flush()
    return packed if len(packed) < len(raw) else raw


def expand(stored: bytes) -> bytes:
    """The MessagePack `stored` holds (compact or plain)."""
    if not stored or stored[0] != TAG:
        return stored
    dictionary = _DICTIONARIES.get(stored[1]) if len(stored) > 1 else None
    if dictionary is None:
        raise CompactError(
            f"a compact value of version {stored[1] if len(stored) > 1 else '(none)'}: "
            f"this version reads version {VERSION}"
        )
    inflate = zlib.decompressobj(-15, dictionary)
    try:
        raw = inflate.decompress(stored[2:]) + inflate.flush()
    except zlib.error as exc:
        raise CompactError(f"a damaged compact value: {exc}") from None
    if not inflate.eof:
        raise CompactError("a damaged compact value: its deflate stream is cut short")
    return raw


def is_compact(stored: bytes) -> bool:
    return bool(stored) and stored[0] == TAG
