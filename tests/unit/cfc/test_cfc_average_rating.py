"""717 AR computed in integers over a common denominator (issue 7's speed-up) is the
exact mean of Ro - 400(W-L)/N."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from service.engine.cfc.formulas import average_rating


def test_average_rating_by_hand():
    # 1500 - 400(2-1)/3 = 4100/3; 1600 - 400(0-2)/2 = 2000; mean (4100/3 + 6000/3) / 2 = 10100/6 = 5050/3
    assert average_rating([(1500, 2, 1, 3), (1600, 0, 2, 2)]) == Fraction(5050, 3)


players = st.integers(1, 30).flatmap(
    lambda n: st.tuples(st.integers(0, 3000), st.integers(0, n), st.just(n)).flatmap(
        lambda t: st.tuples(
            st.just(t[0]), st.just(t[1]), st.integers(0, t[2] - t[1]), st.just(t[2])
        )
    )
)


@given(st.lists(players, min_size=1, max_size=40))
def test_average_rating_is_the_exact_mean_of_the_terms(rated):
    terms = [
        rating - Fraction(400 * (wins - losses), games) for rating, wins, losses, games in rated
    ]
    assert average_rating(rated) == sum(terms, Fraction(0)) / len(terms)
