"""The calculators' input: ratings and games as typed on the command line.

A game is `OPP:SCORE` or, for norms, `OPP:SCORE:TITLE`: the opponent's rating (or
`unrated` / `-` where the tool allows it), the player's score (1, 0.5, 0; also 1/2, ½,
=), and the opponent's title. Every problem is a `ValueError` with one line naming the
value; the command line turns it into its one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RATING_LOW, RATING_HIGH = 0, 4000  # schemas.common.Rating
UNRATED_WORDS = ("unrated", "-", "ur")
SCORE_HALVES = {"1": 2, "1.0": 2, "0.5": 1, ".5": 1, "1/2": 1, "½": 1, "=": 1, "0": 0, "0.0": 0}
TITLES = ("GM", "IM", "WGM", "WIM", "FM", "WFM", "CM", "WCM")


@dataclass(frozen=True)
class Game:
    """One game from the player's side: the opponent's rating (None: unrated), the
    player's score in half points, the opponent's title (None: untitled)."""

    opponent: int | None
    halves: int
    title: str | None = None

    @property
    def score(self) -> float:
        return self.halves / 2


def rating(text: str, what: str = "rating") -> int:
    """A rating: a whole number from 0 to 4000."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a whole number") from None
    if not RATING_LOW <= value <= RATING_HIGH:
        raise ValueError(f"{what} {value} is outside {RATING_LOW}..{RATING_HIGH}")
    return value


def game(text: str, allow_unrated: bool = False, allow_title: bool = False) -> Game:
    """`OPP:SCORE` (or `OPP:SCORE:TITLE` when titles are allowed)."""
    parts = text.split(":")
    shape = "OPP:SCORE[:TITLE]" if allow_title else "OPP:SCORE"
    if len(parts) not in ((2, 3) if allow_title else (2,)):
        raise ValueError(f"--game {text!r}: expected {shape}")
    opponent_text, score_text = parts[0].strip(), parts[1].strip()
    if opponent_text.lower() in UNRATED_WORDS:
        if not allow_unrated:
            raise ValueError(
                f"--game {text!r}: this tool needs the opponent's rating, not {opponent_text!r}"
            )
        opponent = None
    else:
        opponent = rating(opponent_text, f"--game {text!r}: opponent rating")
    halves = SCORE_HALVES.get(score_text)
    if halves is None:
        raise ValueError(f"--game {text!r}: score {score_text!r} is not 1, 0.5 or 0")
    title = None
    if len(parts) == 3 and parts[2].strip():
        title = parts[2].strip().upper()
        if title not in TITLES:
            raise ValueError(
                f"--game {text!r}: title {parts[2]!r} is not one of {', '.join(TITLES)}"
            )
    return Game(opponent, halves, title)


def games(
    texts: Sequence[str], allow_unrated: bool = False, allow_title: bool = False
) -> list[Game]:
    if not texts:
        raise ValueError("at least one --game OPP:SCORE is needed")
    return [game(t, allow_unrated, allow_title) for t in texts]


def wins_losses(played: Sequence[Game]) -> tuple[int, int]:
    """W and L (draws count in N only, CFC 714a)."""
    return sum(1 for g in played if g.halves == 2), sum(1 for g in played if g.halves == 0)
