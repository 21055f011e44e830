"""Where the commands find the service's partitions (service/runtime/partitions.py).

The producing commands (`publish`, `correct`, `withdraw`, `close-period`, `import`) append
each message, and load each record, into the partition of its (system, pool); the reading
ones (`export`, `player`, `history`, `watch`, `rejected`) read every partition. The layout
is, in this order: RATING_PARTITIONS when set; else the one the service advertised for the
base input stream (`--stream`, else RATING_INPUT_STREAMS); else the single layout. A
`--stream` that is one partition's own input stream (`{fide.standard}:events.finished`)
sends everything there, as asked (the service dead-letters what does not belong).
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from schemas.common import DEFAULT_POOL
from service.cli.errors import UserError
from service.cli.settings import cli_settings
from service.runtime.keys import untagged
from service.runtime.partitions import Layout, advertised, layout_of

_ROUTED = msgspec.json.Decoder(dict)


async def layout_for(client: Any, given: str | None) -> Layout:
    """The partitions the command works with, `given` its --stream (see the module's docstring)."""
    settings = cli_settings()
    base = given or settings.input_streams[0]
    chosen = "RATING_PARTITIONS" in os.environ and os.environ["RATING_PARTITIONS"].strip()
    if not chosen:
        found = await advertised(client, base)
        if found is not None:
            return found
    suffix = untagged(base)
    if given and suffix != base:  # perhaps one partition's own stream
        whole = None if chosen else await advertised(client, suffix)
        if whole is None and settings.partitions == "domains":
            whole = layout_of(
                "domains", (suffix,), settings.output_stream, settings.dead_letter_stream
            )
        if whole is not None and base in whole.inputs:  # everything there, whatever its domain
            return Layout(
                "single", (msgspec.structs.replace(whole.of_stream(base), domains=None),), base
            )
    inputs = (base,) if given else settings.input_streams
    try:
        return layout_of(
            settings.partitions, inputs, settings.output_stream, settings.dead_letter_stream
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


def system_pool(raw: bytes) -> tuple[str, str]:
    """The (system, pool) of a checked input message (the system's default pool if none)."""
    document = _ROUTED.decode(raw)
    system = str(document["system"])
    return system, str(document.get("pool") or DEFAULT_POOL[system])
