"""The cyclic collector paused for a cascade's commit (D135): counted, given back as it was."""

from __future__ import annotations

import gc

import pytest

from service.runtime.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_back():
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_a_pause_disables_the_collector_and_gives_it_back():
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_overlapping_pauses_give_it_back_when_the_last_ends():
    gc.enable()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first: the other still runs
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_failure_inside_gives_it_back():
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the commit failed")
    assert gc.isenabled()
