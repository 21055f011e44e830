"""Segments of a long event (docs/rules/naspa.md#naspa-segments): each is a full rating run."""

from __future__ import annotations


def segment_rounds(rounds: int) -> list[tuple[int, int]]:
    """The (first, last) round, numbered from 1, of each segment of an event of `rounds`.

    With n0 = rounds - 1 (rounds numbered from 0): n0 < 16 one segment; n0 < 35 two,
    [0, n0 // 2] and the rest; otherwise three, [0, n0 // 3], [.., (2 n0 + 1) // 3],
    [.., n0].
    """
    n0 = rounds - 1
    if n0 < 16:
        ends = [n0]
    elif n0 < 35:
        ends = [n0 // 2, n0]
    else:
        ends = [n0 // 3, (2 * n0 + 1) // 3, n0]
    segments, first = [], 0
    for last in ends:
        segments.append((first + 1, last + 1))
        first = last + 1
    return segments
