"""service/runtime/lua.py: the scripts a commit sends go without indentation, blank lines or
comments (their text is bytes of every commit), and nothing else of them changes."""

from __future__ import annotations

import pytest

from service.runtime import histories, store
from service.runtime.lua import compact_lua


def test_indentation_blank_lines_and_comments_go_the_code_stays():
    source = """
    -- a comment of its own line
    local x = 1  -- and one after code

    if x == 1 then
      return 'a - b' .. x
    end
    """
    assert compact_lua(source) == "local x = 1\nif x == 1 then\nreturn 'a - b' .. x\nend\n"


def test_a_script_with_dashes_in_a_string_is_refused_not_cut():
    with pytest.raises(ValueError, match="in a string"):
        compact_lua("return '--not a comment'")


@pytest.mark.parametrize(
    "script",
    [
        store._KEEP_RESULTS,
        store._PLAYED,
        store._PLAYED_REVISED,
        store._ACTIVE,
        store._HSET_EACH,
        histories.MERGE,
        histories.FROM,
        histories.CONVERT,
    ],
)
def test_every_script_of_a_commit_is_sent_compact(script):
    assert compact_lua(script) == script
    assert "--" not in script and "\n " not in script
