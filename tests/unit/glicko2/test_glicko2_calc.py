"""`rating-service calc expected|change --system glicko2` (service/calculators/glicko2.py):
the paper's example (docs/rules/glicko2.md G2-1, G2-3) through the calculators, by the
engine's own steps; each bad input one line, exit 2."""

from __future__ import annotations

import json

import pytest
from glicko2_reference import glicko2_period

from service.cli.main import main

PAPER = ["--game", "1400/30:1", "--game", "1550/100:0", "--game", "1700/300:0"]


def calc(capsys, *argv: str) -> dict:
    assert main(["calc", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_expected_score_is_step_3_with_the_other_side_s_rd(capsys):
    out = calc(
        capsys, "expected", "--system", "glicko2", "--rating", "1500", "--rd", "200",
        "--opponent", "1400", "--opponent-rd", "30",
    )  # fmt: skip
    you, them = out["you"], out["opponent"]
    # You: mu_j = (1400 - 1500) / 173.7178 = -0.5756, phi_j = 30 / 173.7178 = 0.1727,
    # g = 1 / sqrt(1 + 3 x 0.1727^2 / pi^2) = 0.9955 (the paper's table),
    # E = 1 / (1 + exp(-0.9955 x 0.5756)) = 1 / (1 + 0.5638) = 0.639 (the paper's 0.639).
    assert (round(you["opponent_mu"], 4), round(you["opponent_phi"], 4)) == (-0.5756, 0.1727)
    assert (round(you["g"], 4), round(you["expected"], 3)) == (0.9955, 0.639)
    # The opponent, against your RD 200: phi_j = 1.1513, g = 1 / sqrt(1 + 3 x 1.3255 / pi^2)
    # = 0.8443, E = 1 / (1 + exp(0.8443 x 0.5756)) = 1 / (1 + 1.6258) = 0.3808: not 1 - 0.639.
    assert (round(them["g"], 4), round(them["expected"], 4)) == (0.8443, 0.3808)


def test_rating_change_is_the_paper_s_example(capsys):
    out = calc(capsys, "change", "--system", "glicko2", "--rating", "1500", "--rd", "200", *PAPER)
    # The paper's table: g 0.9955, 0.9531, 0.7242; E 0.639, 0.432, 0.303.
    assert [round(g["g"], 4) for g in out["games"]] == [0.9955, 0.9531, 0.7242]
    assert [round(g["expected"], 3) for g in out["games"]] == [0.639, 0.432, 0.303]
    # Unrounded v 1.77898 and Delta -0.48393 (the paper's 1.7785 / -0.4834 come from its
    # table's rounded g and E); mu' -0.2069, phi' 0.8722.
    assert (round(out["v"], 5), round(out["delta"], 5)) == (1.77898, -0.48393)
    assert (round(out["mu_new"], 4), round(out["phi_new"], 4)) == (-0.2069, 0.8722)
    after = out["after"]
    assert (after["rating"], after["rd"], after["volatility"]) == (1464.05, 151.52, 0.06)
    assert round(after["rating_unrounded"], 4) == 1464.0507
    assert round(after["rd_unrounded"], 4) == 151.5165
    assert round(after["volatility_unrounded"], 7) == 0.0599960
    # Expected: 0.63946 + 0.43185 + 0.30284 = 1.374.
    assert (out["score"], round(out["expected"], 3)) == (1.0, 1.374)


def test_the_sequential_projection_rates_each_game_as_its_own_period(capsys):
    out = calc(capsys, "change", "--system", "glicko2", "--rating", "1500", "--rd", "200", *PAPER)
    state = (1500.0, 200.0, 0.06)
    for step, game in zip(out["sequential"], [(1400, 30, 1), (1550, 100, 0), (1700, 300, 0)]):
        state = glicko2_period(*state, [game])  # the test's own implementation of the paper
        got = (step["rating_unrounded"], step["rd_unrounded"], step["volatility_unrounded"])
        assert got == pytest.approx(state, rel=1e-12)
    # Three periods are not one: 1463.79 / RD 151.87, beside the period's 1464.05 / 151.52.
    assert (out["sequential"][-1]["rating"], out["sequential"][-1]["rd"]) == (1463.79, 151.87)


def test_the_text_report_shows_the_published_figures(capsys):
    assert main(["calc", "change", "--system", "glicko2", "--rating", "1500", "--rd", "200",
                 "--volatility", "0.06", "--tau", "0.5", *PAPER]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "one rating period (steps 1-8): 1464.05 / RD 151.52 / volatility 0.06000" in text
    assert "g(phi_j)" in text and "0.9955" in text


BAD = [
    (["change", "--rating", "1500", "--rd", "200", "--game", "1400:1"],
     "--game '1400:1': expected OPP/RD:SCORE (e.g. 1400/30:1)"),
    (["change", "--rating", "1500", "--game", "1400/30:1"],
     "glicko2's rating change needs your RD: give --rd"),
    (["change", "--rating", "1500", "--rd", "0", "--game", "1400/30:1"],
     "--rd 0 is outside above 0..10000"),
    (["change", "--rating", "1500", "--rd", "200", "--game", "1400/30:2"],
     "--game '1400/30:2': score '2' is not 1, 0.5 or 0"),
    (["change", "--rating", "1500", "--rd", "200", "--k", "20", "--game", "1400/30:1"],
     "--k is a FIDE K input (8.3.3); glicko2 has no K"),
    (["expected", "--rating", "1500", "--opponent", "1400"],
     "glicko2's expected score needs the opponent's RD: give --opponent-rd"),
    (["performance", "--game", "1400:1"], "glicko2 has no performance rating"),
]  # fmt: skip


@pytest.mark.parametrize("argv,message", BAD)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(["calc", argv[0], "--system", "glicko2", *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_glicko2_options_are_refused_for_another_system(capsys):
    argv = ["calc", "change", "--system", "fide", "--rating", "1500", "--rd", "200"]
    assert main([*argv, "--game", "1400:1"]) == 2
    assert "--rd is a Glicko-2 input; fide has no RD or volatility" in capsys.readouterr().err
