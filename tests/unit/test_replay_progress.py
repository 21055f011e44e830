"""The replay's progress indicator (service.runtime.replay.Progress) and its report."""

from __future__ import annotations

import io

from schemas.records import PlayerRecord
from service.runtime.replay import Counts, MapDiff, PoolDiff, Progress, summary


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_one_line_is_redrawn():
    out = Terminal()
    progress = Progress(4_000, out)
    progress(1_000)
    progress(4_000)  # the last one is always drawn
    progress.finish()
    text = out.getvalue()
    assert text.startswith("\rreplay [#######.......................] 1,000/4,000 25%")
    assert (
        text.endswith("\rreplay [##############################] 4,000/4,000 100%\n")
        and text.count("\n") == 1
    )


def test_off_a_terminal_a_line_every_n_entries():
    out = io.StringIO()
    progress = Progress(5_000, out, every=2_000)
    for done in (1_000, 2_000, 3_000, 4_500, 5_000):
        progress(done)
    progress.finish()
    assert out.getvalue() == "replay: 2,000 of 5,000 entries\nreplay: 4,500 of 5,000 entries\n"


def test_the_report_lists_differing_players_up_to_the_limit():
    def rec(pid: str, rating: int | None, games: int = 30) -> PlayerRecord:
        return PlayerRecord(
            system="cfc",
            pool="regular",
            id=pid,
            rating=rating,
            status="established" if rating else "unrated",
            games=games,
        )

    diff = PoolDiff(
        "cfc",
        "regular",
        identical=7,
        differ=[(rec("a", 1500), rec("a", 1512)), (rec("b", 1600), rec("b", 1600, 31))],
        only_live=[rec("c", 1400)],
        only_replay=[rec("d", None, 0)],
    )
    lines = summary(
        Counts(entries=12, applied=10, duplicates=1, rejected=1),
        [diff],
        MapDiff(identical=10),
        MapDiff(identical=1),
        show=3,
    )
    assert lines == [
        "replayed 12 entries: 10 applied, 1 duplicates, 1 rejected",
        "cfc/regular: 7 identical, 2 differ, 1 only live, 1 only in the replay",
        "  a: live 1500 (established, 30 games) -> replay 1512 (established, 30 games)",
        "  b: live 1600 (established, 30 games) -> replay 1600 (established, 31 games)",
        "  c: live 1400 (established, 30 games), not in the replay",
        "  ... and 1 more",
        "markers: 10 identical, 0 differ, 0 only live, 0 only in the replay",
        "pool states: 1 identical, 0 differ, 0 only live, 0 only in the replay",
        "4 players differ from the live state",
    ]
