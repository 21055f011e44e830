"""`python -m service.bench.instructions` (service/bench/instructions.py): its reading of
callgrind's dumps, its report, and a one-line error where valgrind is missing. Running the
service under callgrind takes minutes: that is the command's, not a test's."""

from __future__ import annotations

import pytest

from service.bench import instructions


def test_totals_reads_the_dump_s_instruction_count(tmp_path):
    dump = tmp_path / "cg.123.1"
    dump.write_text(
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\nevents: Ir\n"
        "fn=(1) main\n0 12\nsummary: 1721530144\ntotals: 1721530144\n"
    )
    assert instructions.totals(str(dump)) == 1_721_530_144


def test_a_dump_without_totals_is_an_error_not_zero(tmp_path):
    dump = tmp_path / "cg.123.1"
    dump.write_text("# callgrind format\nevents: Ir\n")
    with pytest.raises(ValueError, match="no totals"):
        instructions.totals(str(dump))


def test_render_names_the_settings_and_each_workload():
    text = instructions.render(
        {
            "settings": {"RATING_BATCH_SIZE": "64"},
            "two_player": {"events": 2000, "instructions_per_event": 860341.2},
            "swiss_64x7": {"events": 50, "instructions_per_event": 24_512_000.0},
        }
    )
    assert "RATING_BATCH_SIZE=64" in text
    assert "two-player events" in text and "860,341" in text
    assert "64-player 7-round events" in text and "24,512,000" in text


def test_without_valgrind_one_line_and_a_non_zero_exit(monkeypatch, capsys):
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    assert instructions.main(["--events", "10"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "valgrind is not installed" in err
