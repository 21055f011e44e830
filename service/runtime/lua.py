"""The text of the Lua scripts a commit sends, without what Redis does not read: indentation,
blank lines and comments.

A commit's scripts go as EVAL, with their text, inside its MULTI/EXEC: an EVALSHA there would
fail alone with NOSCRIPT after a restart or a fail-over emptied the server's script cache, and
the rest of the transaction would still be applied. So each commit sends every script it runs
in full, and a script's comments are bytes of every commit (`RATING_MAX_COMMIT_BYTES` counts
them). The comments stay in the Python source beside each script (D143).
"""

from __future__ import annotations

import re

# A comment: `--` to the end of the line, where no quote precedes it on the line (the scripts
# keep no `--` inside a string; `compact_lua` refuses one).
_QUOTED_DASHES = re.compile(r"""['"][^'"]*--""")


def compact_lua(source: str) -> str:
    """`source` with each line stripped, comments and blank lines left out (newlines kept:
    they end statements where the source relies on it)."""
    lines = []
    for line in source.splitlines():
        if "--" in line:
            if _QUOTED_DASHES.search(line):
                raise ValueError(f"a script line with `--` in a string: {line.strip()!r}")
            line = line.split("--", 1)[0]
        code = line.strip()
        if code:
            lines.append(code)
    return "\n".join(lines) + "\n"
