"""What a commit publishes, in the same MULTI/EXEC as its writes: one `ratings.updated/v1`
per rated event or revision on the partition's output stream, one `event.rejected/v1` per
rejected entry on its dead-letter stream, in the entries' order (docs/design/guarantees.md
"Bad input")."""

from __future__ import annotations

from typing import Any

from service.rating import Applied, Rejected
from service.runtime.deadletters import rejection_message
from service.runtime.entries import Decision
from service.runtime.partitions import Partition
from service.runtime.store import encode, xadd


def queue_outputs(
    pipe: Any, partition: Partition, stream: str, decisions: list[Decision], maxlen: int
) -> None:
    """The ratings.updated and event.rejected entries of `decisions` (entries of `stream`), in
    order; each stream is trimmed (approximately, to `maxlen`: RATING_OUTPUT_MAXLEN, 0 for
    never) once per commit rather than per entry."""
    written: set[str] = set()
    for decision in decisions:
        outcome = decision.outcome
        if isinstance(outcome, Applied):
            for output in outcome.outputs:
                xadd(pipe, partition.output, encode(output))
            written.add(partition.output)
        elif isinstance(outcome, Rejected):
            rejected = rejection_message(outcome, stream, decision.entry)
            xadd(pipe, partition.dead_letter, encode(rejected))
            written.add(partition.dead_letter)
    if maxlen:
        for output_stream in sorted(written):
            pipe.xtrim(output_stream, maxlen=maxlen, approximate=True)
