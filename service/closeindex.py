"""The close index of a pool with rating periods (D60): who a `period.closed` must read.

`{S}:due:<system>:<pool>` is a sorted set of lexicographic members (every score 0), a
function of the pool's records kept by every write of a record (a commit that rates,
corrects, withdraws, re-rates, closes or reopens, an import) from the record before and
after it:

- `<period>:<id>`: the record has games counted in that period (period sums of a rated
  player, pooled games of an unrated one): the players the period's list holds;
- `k:<id>`: the record carries an imported K, which the next list ends (F5);
- `.`: the index is built (the start-up back-fill writes it last, D61).

Periods are `YYYY-MM` (digits first), so every period member sorts before `k:` and after
`.`: a close reads the earliest and the latest open period with one ZRANGE each, and its
players a page at a time by ZRANGE BYLEX. Pure: records in, members out.
"""

from __future__ import annotations

from schemas.common import PERIOD_SYSTEMS
from schemas.records import PlayerRecord

BUILT = b"."
K_FIRST, K_END = b"[k:", b"(k;"  # the K members' lexicographic range
PERIODS_END = b"(:"  # after every period member, before `k:`


def due_members(record: PlayerRecord | None) -> set[bytes]:
    """The record's members of its pool's close index (none for a system without periods)."""
    if record is None or record.system not in PERIOD_SYSTEMS:
        return set()
    pid = record.id.encode()
    members = {b"k:" + pid} if record.k is not None else set()
    state = record.fide
    if state is not None:
        periods = {s.period for s in state.periods} | {g.period for g in state.initial_games}
        members.update(f"{period}:".encode() + pid for period in periods)
    return members


def period_first(period: str) -> bytes:
    """The lower bound (inclusive) of the period's members."""
    return f"[{period}:".encode()


def period_end(period: str) -> bytes:
    """The upper bound (exclusive) of the period's members (';' follows ':')."""
    return f"({period};".encode()


def open_first(closed: str | None) -> bytes:
    """The lower bound of the members of the periods after `closed` (None: every period)."""
    return period_end(closed) if closed is not None else b"[0"


def after(member: bytes) -> bytes:
    """The lower bound just past `member` (a page's next start)."""
    return b"(" + member


def split(member: bytes) -> tuple[str, str]:
    """(`<period>` or `k`, player id) of a member."""
    head, _, pid = member.decode().partition(":")
    return head, pid
