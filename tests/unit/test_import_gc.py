"""`import` runs with the cyclic garbage collector off (D113) and gives it back as it was,
after a refusal too."""

from __future__ import annotations

import gc

import pytest

from service.cli import data
from service.cli.errors import UserError


def test_the_collector_is_off_inside_and_as_it_was_after():
    assert gc.isenabled()
    with data.no_cycle_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with data.no_cycle_collection():
            assert not gc.isenabled()
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_a_refused_import_gives_the_collector_back(monkeypatch):
    seen = []

    def refuse(args):
        seen.append(gc.isenabled())
        raise UserError("refused")

    monkeypatch.setattr(data, "_import", refuse)
    with pytest.raises(UserError):
        data.cmd_import(None)  # type: ignore[arg-type]  # _import replaced: no arguments read
    assert seen == [False] and gc.isenabled()
