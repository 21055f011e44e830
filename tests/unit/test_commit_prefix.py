"""How a batch of entries is cut into commits (service/runtime/processor.py `commit_prefix`):
at most RATING_COMMIT_PLAYERS players per commit, always at least one entry."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from service.rating import Needs, Rejected
from service.runtime.entries import Entry
from service.runtime.processor import commit_prefix, players_of


def event(n: int, players: int) -> Entry:
    ids = tuple(f"p{i}" for i in range(players))
    return Entry(
        f"{n}-0", {}, None, Needs("cfc", "regular", ids, None, f"event:e{n}"), None, f"e{n}"
    )


def close(n: int) -> Entry:
    return Entry(
        f"{n}-0",
        {},
        None,
        Needs("fide", "standard", None, None, f"period:fide:standard:2025-{n:02d}"),
        None,
        None,
    )


def rejected(n: int) -> Entry:
    return Entry(f"{n}-0", {}, None, None, Rejected("malformed", "not JSON"), None)


def withdrawal(n: int) -> Entry:
    return Entry(
        f"{n}-0", {}, None, Needs("cfc", "regular", (), None, f"event:e{n}"), None, f"e{n}"
    )


def test_small_events_fill_the_commit_up_to_the_budget():
    entries = [event(n, 2) for n in range(10)]
    assert commit_prefix(entries, 8) == entries[:4]  # 4 x 2 = 8 players; a fifth would make 10
    assert commit_prefix(entries, 20) == entries  # all of them fit
    assert commit_prefix(entries, 9) == entries[:4]


def test_a_bigger_event_than_the_budget_is_committed_alone():
    big = event(0, 64)
    assert commit_prefix([big, event(1, 2)], 16) == [big]
    assert commit_prefix([event(1, 2), big], 16) == [
        event(1, 2)
    ]  # the big one waits for the next commit


def test_a_close_rates_the_whole_pool_and_is_committed_alone():
    assert players_of(close(11), 4096) == 4096
    assert commit_prefix([close(11), event(1, 2)], 4096) == [close(11)]
    assert commit_prefix([event(1, 2), close(11)], 4096) == [event(1, 2)]


def test_rejections_and_withdrawals_count_as_one_player():
    assert players_of(rejected(1), 100) == 1 and players_of(withdrawal(2), 100) == 1
    entries = [rejected(1), withdrawal(2), event(3, 2)]
    assert commit_prefix(entries, 3) == entries[:2]
    assert commit_prefix(entries, 4) == entries


@given(
    st.lists(st.integers(min_value=0, max_value=80), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=300),
)
def test_successive_commits_cover_the_batch_in_order_within_the_budget(sizes, budget):
    """Cutting again after each commit (what the processor does) takes every entry once, in
    order; each commit holds at most the budget unless it is one entry."""
    entries = [withdrawal(n) if size == 0 else event(n, size) for n, size in enumerate(sizes)]
    rest, commits = entries, []
    while rest:
        commit = commit_prefix(rest, budget)
        assert commit and commit == rest[: len(commit)]
        commits.append(commit)
        rest = rest[len(commit) :]
    assert [e for commit in commits for e in commit] == entries
    for commit in commits:
        weight = sum(players_of(e, budget) for e in commit)
        assert len(commit) == 1 or weight <= budget
        nxt = len(commit)
        if nxt < len(entries) and commit[-1] is not entries[-1]:
            following = entries[entries.index(commit[-1]) + 1]
            assert weight + players_of(following, budget) > budget  # it did not stop early
