"""`rating-service watch`: ratings.updated messages as tables, for tournament directors."""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from schemas.ratings import PlayerResult, RatingsUpdated

_decoder = msgspec.json.Decoder(RatingsUpdated)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _change(result: PlayerResult) -> str:
    if result.change is None:
        return "-"
    return f"{result.change:+d}"


def _projected(result: PlayerResult) -> str:
    details = result.details
    projected = getattr(details, "projected_rating", None)
    return "-" if projected is None else f"{projected} (projected)"


def render(message: RatingsUpdated) -> str:
    """One message as a heading and a table of its players."""
    what = message.event_id if message.kind == "event" else f"list {message.period} ({message.chunk}/{message.chunks})"
    lines = [f"{what}  {message.system}/{message.pool}  {message.ruleset}  entry {message.source_id}"]
    fide_event = message.system == "fide" and message.kind == "event"
    headers = ["player", "old", "new", "change", "status", "games", "event", "score"]
    if fide_event:
        headers.append("projection")
    rows = []
    for p in message.players:
        status = p.status if p.status == p.old_status else f"{p.old_status} -> {p.status}"
        row = [p.id, _cell(p.old_rating), _cell(p.new_rating), _change(p), status, _cell(p.games),
               _cell(p.event_games), _cell(p.score)]
        if fide_event:
            row.append(_projected(p))
        rows.append(row)
    lines.extend(_table(headers, rows))
    return "\n".join(lines)


def _table(headers: list[str], rows: Iterable[list[str]]) -> list[str]:
    rows = list(rows)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    left = {0, 4}  # player ids and statuses read better left-aligned

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return ["  " + line(headers), *("  " + line(r) for r in rows)]


def decode(data: bytes) -> RatingsUpdated:
    return _decoder.decode(data)
