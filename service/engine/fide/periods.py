"""Rating periods (monthly lists) and the list in force on a date (F1).

A period is `YYYY-MM` (its arithmetic: schemas/periods.py). Closing period P publishes the list in force from P+1 on; a
record's `PublishedRating(period=Q, rating=R)` says R is in force from Q on.
"""

from __future__ import annotations

from schemas.fide import PublishedRating
from schemas.periods import add_months
from schemas.records import PlayerRecord

# FIDE 7.1.4 / 8.2: an unrated player's games are pooled over at most 26 months.
POOL_MONTHS = 26
# How many months of published lists a record keeps for events that started earlier (F1).
KEEP_LIST_MONTHS = 24


def rating_in_force(record: PlayerRecord, month: str) -> int | None:
    """F1: the player's rating on the list in force during `month` (null: unrated).

    The record's `rating` is the current list: it is in force from the newest kept
    list's period on (so an import that corrects it is honoured), and always when no
    list is kept. For an earlier month, the newest kept list from that month or before;
    for a month before every kept list, the oldest one (the store knows nothing older).
    """
    published = record.fide.published if record.fide is not None else []
    if not published or month >= published[-1].period:
        return record.rating
    chosen = published[0]
    for entry in published:
        if entry.period <= month:
            chosen = entry
        else:
            break
    return chosen.rating


def with_new_list(
    published: list[PublishedRating],
    closed: str,
    old: int | None,
    old_k: int | None,
    new: PublishedRating,
) -> list[PublishedRating]:
    """The kept lists after publishing `new` (in force from closed+1): the list in force
    during `closed` is recorded first if the record did not have it, and lists older
    than KEEP_LIST_MONTHS before the newest are dropped (the last of them is kept as
    the one in force before the others)."""
    lists = list(published)
    if not lists:
        lists.append(PublishedRating(period=closed, rating=old, k=old_k))
    lists.append(new)
    horizon = add_months(new.period, -KEEP_LIST_MONTHS)
    while len(lists) > 1 and lists[1].period <= horizon:
        lists.pop(0)
    return lists
