"""An event's crosstable (D42, `GET /v1/events/{event_id}/crosstable`): the chess-results
layout from the event's archived content (its games and byes) and its last published
message (the ratings).

Order: points (games, forfeits and byes, as the standings count them), then the rating the
event was rated from (higher first, unrated last), then the player id; the event's own
tiebreaks are not in the contract. Rows are numbered in that order, and each result names
its opponent by that number. Colour is not in the contract (`a` / `b`), so it is not shown.

Pure: Structs in, a Struct out.
"""

from __future__ import annotations

from schemas.ratings import PlayerResult, RatingsUpdated
from schemas.reads import Crosstable, CrosstablePlayer, CrosstableResult
from service.timeline import Archived

_KINDS = {"game": 0, "forfeit": 0, "bye": 1}  # in a round: games before byes


def shown_rating(result: PlayerResult) -> tuple[int | None, int | None, bool]:
    """(new rating, change, projection) as the pages show them: the message's, except that
    an open FIDE period's are the projection, `details.projected_rating` and it minus the
    old rating (F9; the same rule as a player's history, service/readmodel.py)."""
    projected = getattr(result.details, "projected_rating", None)
    if projected is None:
        return result.new_rating, result.change, False
    change = projected - result.old_rating if result.old_rating is not None else None
    return projected, change, True


def rating_used(result: PlayerResult) -> int | None:
    """The rating the event was rated from: FIDE's `details.rating_used` (the list in force
    at the start), else the rating before the event."""
    used = getattr(result.details, "rating_used", None)
    return used if used is not None else result.old_rating


def crosstable(message: RatingsUpdated, archived: Archived | None) -> Crosstable:
    """The crosstable of the event whose last message is `message` (`archived`: its archive,
    None when it was not kept: the rows then have no results)."""
    assert message.event_id is not None
    results, names = {r.id: r for r in message.players}, {r.id: r.name for r in message.players}
    own: dict[str, list[tuple[int, int, str, str | None, float]]] = {}
    rounds = 0
    if archived is not None:
        event = archived.event
        ids = [p.id for p in event.players]
        names.update({p.id: p.name for p in event.players if p.name})
        own = {pid: [] for pid in ids}
        for g in event.games:
            kind = "forfeit" if g.forfeit else "game"
            own[g.a].append((g.round, _KINDS[kind], kind, g.b, g.score))
            own[g.b].append((g.round, _KINDS[kind], kind, g.a, 1 - g.score))
        for b in event.byes:
            own[b.player].append((b.round, _KINDS["bye"], "bye", None, b.score))
        rounds = max([event.rounds, *(r for rows in own.values() for r, *_ in rows)])
    else:
        ids = [r.id for r in message.players]
    points = {pid: sum(row[4] for row in own.get(pid, [])) for pid in ids}

    def used(pid: str) -> int | None:
        return rating_used(results[pid]) if pid in results else None

    order = sorted(ids, key=lambda pid: (-points[pid], -(used(pid) or -1), pid))
    number = {pid: n for n, pid in enumerate(order, 1)}
    players = []
    for pid in order:
        running = 0.0
        cells = []
        for rnd, _, kind, opponent, score in sorted(own.get(pid, []), key=lambda r: r[:2]):
            running += score
            cells.append(
                CrosstableResult(
                    round=rnd,
                    kind=kind,  # type: ignore[arg-type]  # one of the three kinds above
                    opponent=number[opponent] if opponent is not None else None,
                    opponent_id=opponent,
                    score=score,
                    running=running,
                )
            )
        result = results.get(pid)
        new, change, projection = (
            shown_rating(result) if result is not None else (None, None, False)
        )
        players.append(
            CrosstablePlayer(
                number=number[pid],
                rank=1 + sum(1 for other in ids if points[other] > points[pid]),
                id=pid,
                name=names.get(pid),
                rating=used(pid),
                new_rating=new,
                change=change,
                projection=projection,
                points=points[pid],
                score=result.score if result is not None else None,
                games=result.event_games if result is not None else None,
                expected=result.expected if result is not None else None,
                performance=result.performance if result is not None else None,
                results=cells,
            )
        )
    return Crosstable(
        event_id=message.event_id,
        system=message.system,
        pool=message.pool,
        name=message.name,
        start_date=message.start_date,
        end_date=message.end_date,
        period=message.period,
        rounds=rounds,
        revision=message.revision or 0,
        withdrawn=message.withdrawn,
        archived=archived is not None,
        players=players,
    )
