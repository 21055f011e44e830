"""Reading messages from files: one JSON document, a JSON array, or JSON Lines.

Each message comes with where it was found (`file:line`), for one-line error messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from schemas.validation import printable  # noqa: F401  # the CLI's and the readers' (D81)


class FileProblem(Exception):
    """A file that cannot be read as messages: the message names the file and line."""


def read_documents(path: str | Path) -> Iterator[tuple[str, bytes]]:
    """Yield (location, raw JSON) for each message of the file.

    A file holding one JSON object or one JSON array is read whole (location `file` or
    `file[i]`); otherwise it is JSON Lines (location `file:line`; blank lines skipped).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileProblem(f"{path}: cannot read: {exc.strerror or exc}") from None
    stripped = data.strip()
    if stripped[:1] in (b"{", b"["):
        try:
            whole = msgspec.json.decode(stripped)
        except (msgspec.DecodeError, RecursionError):
            whole = None  # JSON Lines, or broken: read line by line
        if isinstance(whole, dict):
            if b"\n" in stripped:
                yield str(path), stripped  # one pretty-printed document
            else:
                first = data[: data.index(b"{")].count(b"\n") + 1
                yield f"{path}:{first}", stripped
            return
        if isinstance(whole, list):
            for i, item in enumerate(whole):
                yield f"{path}[{i}]", msgspec.json.encode(item)
            return
    for number, line in enumerate(data.splitlines(), 1):
        if line.strip():
            yield f"{path}:{number}", line.strip()
