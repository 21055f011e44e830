"""Reports for people: a `ratings.updated/v1` message, with the event it rates, as plain text
(`rating-service rate --table`, and the tables of `rating-service watch`).

Pure: the event and the message in, lines of text out; reads the contract (schemas) only.
Each system gets the layout its rating officers know:

- CFC: the crosstable the CFC publishes with its ratings: rank, name, id, old rating, one
  cell per round (`W12` a win against number 12, `L5`, `D3`; `X12` / `F12` a forfeit won /
  lost, `B` / `H` / `U` a full / half / zero-point bye, `-` no game), total score,
  performance, new rating and change.
- FIDE: the FIDE rating calculator's layout, per player: each counted game's opponent,
  opponent's rating, D, PD, W and W - We, then the sums, K, K x sum and the projected rating
  (FIDE 8.3); an unrated player's pooled games and the initial rating's figures (8.2). A
  list message (a period's close) prints the list's changes.
- NASPA: tsh's ratings report: rank, name, id, games, wins (W-L), old and new rating,
  change, and the opponents round by round. The contract carries no spread, so there is none.

The figures are the message's own (2 decimals, schemas/ratings.py "Numbers"): nothing is
computed again here but totals of what the message lists and the event's own scores.
Lines aim at 100 columns; a long event's crosstable can be wider.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from schemas.cfc import CfcDetails
from schemas.events import EventContent
from schemas.fide import FideDetails
from schemas.naspa import NaspaDetails
from schemas.ratings import PlayerResult, RatingsUpdated

WIDTH = 100  # the columns a report aims to fit
NAME_WIDTH = 22  # longer names are cut (with "~") so that the tables fit
LEGEND_CFC = (
    "W/L/D win/loss/draw against number, X/F forfeit won/lost, B/H/U bye of 1/0.5/0, - no game"
)
_CAUSES = {
    "corrected": "the correction of",
    "withdrawn": "the withdrawal of",
    "inserted": "the late arrival of",
    "reopened": "the reopening of",
}


# ------------------------------------------------------------------ cells and tables
def number(value: float | int | None) -> str:
    """A figure of the message as written, without a trailing `.0`: 1894.0 -> 1894,
    1598.33 -> 1598.33, 0.8 -> 0.8, None -> `-`."""
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def hundredths(value: float | None) -> str:
    """A 2-decimal figure with both decimals, as a calculator prints it: 0.8 -> 0.80."""
    return "-" if value is None else f"{value:.2f}"


def signed(value: int | None) -> str:
    return "-" if value is None else f"{value:+d}"


def score(value: float) -> str:
    """A score: 2.5, 3, 0.5 (never 3.0)."""
    return number(value)


def _rating(value: int | None) -> str:
    return "unr." if value is None else str(value)


def cut(text: str, width: int = NAME_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    left: Iterable[int] = (0,),
    indent: str = "  ",
) -> list[str]:
    """Columns padded to their widest cell, two spaces apart: the columns in `left` (text)
    left-aligned, the others (figures) right-aligned; trailing spaces dropped."""
    rows = [list(r) for r in rows]
    left = set(left)
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return (
            indent
            + "  ".join(
                c.ljust(w) if i in left else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths))
            ).rstrip()
        )

    return [line(headers), *(line(r) for r in rows)]


# ------------------------------------------------------------------ heading
def heading(message: RatingsUpdated) -> list[str]:
    """What the message is: the event (or list chunk), system, pool, ruleset, source entry; a
    revision says why."""
    reopened = message.cause is not None and message.cause.type == "reopened"
    if message.kind == "list":
        what = f"list {message.period} ({message.chunk}/{message.chunks})"
    elif reopened:
        what = f"list {message.period}  REVISION {message.revision}"
    elif message.kind == "revision":
        what = f"{message.event_id}  REVISION {message.revision}"
    else:
        what = message.event_id or ""
    lines = [
        f"{what}  {message.system}/{message.pool}  {message.ruleset}  entry {message.source_id}"
    ]
    if message.kind == "revision" and message.cause is not None:
        cause = message.cause
        if reopened:
            lines.append(
                f"  withdrawn: period {message.period} reopened, every record back to before its close"
            )
        elif message.withdrawn:
            lines.append(
                "  withdrawn: it no longer counts, and its players' later events are re-rated"
            )
        elif cause.event_id == message.event_id and cause.type == "corrected":
            lines.append("  corrected")
        else:
            lines.append(f"  re-rated after {_CAUSES[cause.type]} {cause.event_id}")
    return lines


def dates(message: RatingsUpdated) -> list[str]:
    """The event's name and dates, where the message has them."""
    if not (message.name or message.start_date):
        return []
    when = (
        str(message.start_date)
        if message.start_date == message.end_date
        else f"{message.start_date} to {message.end_date}"
    )
    return [f"  {message.name or ''}  {when if message.start_date else ''}".rstrip()]


def render(
    message: RatingsUpdated,
    event: EventContent | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """The report of one message: the system's layout when the event is known (an event
    or revision), else (a list, or an event whose content is not at hand) the list of
    changes, with the players' `names` where known (a list message carries none)."""
    lines = heading(message) + dates(message)
    if message.withdrawn:
        return "\n".join(lines)
    if message.kind == "list" or event is None:
        lines += changes(message, names)
    elif message.system == "cfc":
        lines += cfc_crosstable(message, event)
    elif message.system == "fide":
        lines += fide_calculator(message, event)
    else:
        lines += naspa_report(message, event)
    return "\n".join(lines)


# ------------------------------------------------------------------ standings
def _names(message: RatingsUpdated, event: EventContent | None) -> dict[str, str]:
    names = {p.id: p.name for p in event.players if p.name} if event is not None else {}
    names.update({p.id: p.name for p in message.players if p.name})
    return names


def _points(event: EventContent) -> dict[str, float]:
    """Each player's total score in the event: games (forfeits included) and byes."""
    points = {p.id: 0.0 for p in event.players}
    for g in event.games:
        points[g.a] += g.score
        points[g.b] += 1 - g.score
    for b in event.byes:
        points[b.player] += b.score
    return points


def _ranked(message: RatingsUpdated, event: EventContent) -> list[tuple[int, PlayerResult]]:
    """The players in standing order, numbered from 1: total score, then new (else old)
    rating, highest first, then id."""
    points = _points(event)
    players = sorted(
        message.players,
        key=lambda p: (
            -points.get(p.id, 0.0),
            -(p.new_rating if p.new_rating is not None else p.old_rating or 0),
            p.id,
        ),
    )
    return list(enumerate(players, 1))


def _round_cells(event: EventContent, numbers: dict[str, int]) -> dict[str, list[str]]:
    """Per player, one cell per round: result letter and the opponent's number."""
    cells = {p.id: ["-"] * event.rounds for p in event.players}
    letter = {1.0: "W", 0.5: "D", 0.0: "L"}
    for g in event.games:
        for me, other, mine in ((g.a, g.b, g.score), (g.b, g.a, 1 - g.score)):
            mark = ("X" if mine == 1 else "F") if g.forfeit else letter[mine]
            cells[me][g.round - 1] = f"{mark}{numbers.get(other, '?')}"
    for b in event.byes:
        cells[b.player][b.round - 1] = {1.0: "B", 0.5: "H", 0.0: "U"}[b.score]
    return cells


# ------------------------------------------------------------------ CFC
def cfc_crosstable(message: RatingsUpdated, event: EventContent) -> list[str]:
    ranked = _ranked(message, event)
    numbers = {p.id: n for n, p in ranked}
    cells = _round_cells(event, numbers)
    names = _names(message, event)
    points = _points(event)
    headers = [
        "No.",
        "Name",
        "ID",
        "Old",
        *(f"R{r}" for r in range(1, event.rounds + 1)),
        "Score",
        "Perf",
        "New",
        "Chg",
    ]
    rows = []
    for n, p in ranked:
        old = (
            "unr."
            if p.old_rating is None
            else f"{p.old_rating}{'P' if p.old_status == 'provisional' else ''}"
        )
        new = (
            "unr."
            if p.new_rating is None
            else f"{p.new_rating}{'P' if p.status == 'provisional' else ''}"
        )
        rows.append(
            [
                f"{n}",
                cut(names.get(p.id, "")),
                p.id,
                old,
                *cells.get(p.id, []),
                score(points.get(p.id, 0.0)),
                number(p.performance),
                new,
                signed(p.change),
            ]
        )
    lines = table(headers, rows, left=(1, 2, *range(4, 4 + event.rounds)))
    notes = [
        "  " + LEGEND_CFC,
        "  P provisional (714a); Perf the event's performance (714a form); Score with byes and forfeits",
    ]
    floors = [
        f"{p.id} {d.floor}" for _, p in ranked if isinstance(d := p.details, CfcDetails) and d.floor
    ]
    bonuses = [
        f"{p.id} +{number(d.participation_bonus)}+{d.result_bonus}"
        for _, p in ranked
        if isinstance(d := p.details, CfcDetails) and (d.participation_bonus or d.result_bonus)
    ]
    if bonuses:
        notes.append("  714c bonus (participation + result): " + ", ".join(bonuses))
    if floors:
        notes.append("  716 floor applied: " + ", ".join(floors))
    return lines + notes


# ------------------------------------------------------------------ FIDE
def fide_calculator(message: RatingsUpdated, event: EventContent) -> list[str]:
    names = _names(message, event)
    lines: list[str] = []
    for p in message.players:
        d = p.details
        if not isinstance(d, FideDetails):
            continue
        who = f"  {p.id}  {names.get(p.id, '')}".rstrip()
        lines.append("")
        if d.k is None:  # no rating: the games pooled for an initial rating (8.2)
            lines.append(f"{who}  unrated  period {d.period}")
            rows = [
                [str(g.round), g.opponent, str(g.opponent_rating), score(g.score)] for g in d.games
            ]
            if rows:
                lines += table(["Rd", "Opponent", "Rating", "W"], rows, left=(1,), indent="    ")
            lines.append("    " + _initial_line(d))
            continue
        lines.append(f"{who}  rating {d.rating_used}  K {d.k}  period {d.period}")
        rows = [
            [
                str(g.round),
                g.opponent,
                str(g.opponent_rating),
                number(g.difference),
                hundredths(g.expected),
                score(g.score),
                hundredths(g.change),
                hundredths(g.rating_change),
            ]
            for g in d.games
        ]
        if rows:
            rows.append(
                [
                    "",
                    "sum",
                    "",
                    "",
                    hundredths(p.expected),
                    score(p.score),
                    hundredths(d.event_sum),
                    hundredths(d.event_change),
                ]
            )
            lines += table(
                ["Rd", "Opponent", "Rating", "D", "PD", "W", "W-We", "K x (W-We)"],
                rows,
                left=(1,),
                indent="    ",
            )
        else:
            lines.append(
                "    no rated game (opponents unrated when the event started, or forfeits)"
            )
        lines.append(
            f"    K x sum = {d.k} x {hundredths(d.event_sum)} = {hundredths(d.event_change)}"
        )
        period = f"period {d.period} so far: {d.period_games} games, sum {hundredths(d.period_sum)}"
        if d.projected_rating is not None and d.rating_used is not None:
            lines.append(
                f"    {period}; projected rating {d.projected_rating} ({signed(d.projected_rating - d.rating_used)})"
            )
        else:
            lines.append(f"    {period}; projected: under 1400, off the list (7.2.1)")
    return lines[1:] if lines and lines[0] == "" else lines


def _initial_line(d: FideDetails) -> str:
    i = d.initial
    if i is None:
        return "initial rating (8.2): no game against a rated opponent yet"
    dropped = (
        f"\n    first event {i.disregarded_event} disregarded: it scored 0 (7.1.4)"
        if i.disregarded_event
        else ""
    )
    if i.rating is None:
        return f"initial rating (8.2): {i.games} games, {score(i.points)} points so far: {i.reason}{dropped}"
    capped = ", capped at 2200" if i.capped else ""
    state = "reaches the list" if i.published else (i.reason or "not published")
    return (
        f"initial rating (8.2): {i.games} games, {score(i.points)} points, Ra {number(i.ra)}, "
        f"p {i.p_hundredths}%, dp {i.dp}: Ru {i.rating}{capped} ({state}){dropped}"
    )


# ------------------------------------------------------------------ NASPA
def naspa_report(message: RatingsUpdated, event: EventContent) -> list[str]:
    ranked = _ranked(message, event)
    numbers = {p.id: n for n, p in ranked}
    names = _names(message, event)
    wins: dict[str, list[float]] = {p.id: [0, 0, 0] for p in event.players}  # won, lost, drawn
    for g in event.games:
        if g.forfeit:
            continue
        for me, mine in ((g.a, g.score), (g.b, 1 - g.score)):
            wins[me][{1.0: 0, 0.0: 1, 0.5: 2}[mine]] += 1
    opponents = {p.id: ["-"] * event.rounds for p in event.players}
    for g in event.games:
        for me, other, mine in ((g.a, g.b, g.score), (g.b, g.a, 1 - g.score)):
            mark = "+" if mine == 1 else "-" if mine == 0 else "="
            opponents[me][g.round - 1] = (
                f"{mark}{numbers.get(other, '?')}{'f' if g.forfeit else ''}"
            )
    for b in event.byes:
        opponents[b.player][b.round - 1] = "bye"
    rows = []
    for n, p in ranked:
        won, lost, drawn = wins.get(p.id, [0, 0, 0])
        record = f"{number(won + drawn / 2)}-{number(lost + drawn / 2)}"
        rows.append(
            [
                str(n),
                cut(names.get(p.id, "")),
                p.id,
                str(p.event_games),
                record,
                hundredths(p.expected),
                _rating(p.old_rating),
                _rating(p.new_rating),
                signed(p.change),
                " ".join(opponents.get(p.id, [])),
            ]
        )
    lines = table(
        [
            "No.",
            "Name",
            "ID",
            "Games",
            "W-L",
            "Expected",
            "Old",
            "New",
            "Chg",
            "Opponents by round",
        ],
        rows,
        left=(1, 2, 9),
    )
    newcomers = [
        p.id
        for _, p in ranked
        if isinstance(d := p.details, NaspaDetails) and d.newcomer_iterations
    ]
    lines.append("  Opponents: +n won, -n lost, =n drawn against number n (f: forfeit, not rated)")
    if newcomers:
        lines.append(
            "  newcomers rated by the iterative performance rating (N2-N4): " + ", ".join(newcomers)
        )
    return lines


# ------------------------------------------------------------------ lists
def changes(message: RatingsUpdated, names: Mapping[str, str] | None = None) -> list[str]:
    """A message as its players' changes: a FIDE list shows the closed period's sum and
    K x sum (8.3.4); any other (an event without its content) the plain figures."""
    names = {**(names or {}), **_names(message, None)}
    fide_list = message.system == "fide" and message.kind == "list"
    headers = ["ID", "Name", "Old", "New", "Chg", "Status", "Games", "Score"]
    if fide_list:
        headers += ["Sum", "K", "K x sum", "Next K"]
    rows = []
    for p in message.players:
        status = p.status if p.status == p.old_status else f"{p.old_status} -> {p.status}"
        row = [
            p.id,
            cut(names.get(p.id, "")),
            _rating(p.old_rating),
            _rating(p.new_rating),
            signed(p.change),
            status,
            str(p.event_games),
            score(p.score),
        ]
        if fide_list:
            d = p.details
            if isinstance(d, FideDetails) and d.k_applied is not None:
                row += [
                    hundredths(d.period_sum),
                    str(d.k_applied),
                    hundredths(d.period_change),
                    number(d.k),
                ]
            elif isinstance(d, FideDetails) and d.initial is not None:
                row += ["initial", "-", "-", number(d.k)]
            else:
                row += ["-", "-", "-", "-"]
        rows.append(row)
    return table(headers, rows, left=(0, 1, 5))
