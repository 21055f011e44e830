"""What a commit publishes, in the same MULTI/EXEC as its writes: one `ratings.updated/v1`
per rated event or revision on the partition's output stream, one `event.rejected/v1` per
rejected entry on its dead-letter stream, in the entries' order (docs/design/guarantees.md
"Bad input")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from service.rating import Applied, Rejected
from service.runtime.deadletters import rejection_message
from service.runtime.entries import Decision
from service.runtime.partitions import Partition
from service.runtime.store import encode, xadd


class Output(NamedTuple):
    """One entry a commit appends: the stream, the message, and whether it is a ratings.updated
    (or list) message on the output stream rather than a dead letter."""

    stream: str
    data: bytes
    rated: bool


def outputs_of(
    partition: Partition,
    stream: str,
    decisions: list[Decision],
    encoded: Callable[[Any], bytes] = encode,
) -> list[Output]:
    """The ratings.updated and event.rejected entries of `decisions` (entries of `stream`),
    encoded, in order (`encoded`: store.encode, or what gives its bytes made ahead, D136)."""
    found: list[Output] = []
    for decision in decisions:
        outcome = decision.outcome
        if isinstance(outcome, Applied):
            found += [Output(partition.output, encoded(o), True) for o in outcome.outputs]
        elif isinstance(outcome, Rejected):
            rejected = rejection_message(outcome, stream, decision.entry)
            found.append(Output(partition.dead_letter, encode(rejected), False))
    return found


def queue_outputs(
    pipe: Any, partition: Partition, stream: str, decisions: list[Decision], maxlen: int
) -> None:
    """The ratings.updated and event.rejected entries of `decisions` (entries of `stream`), in
    order (queue_encoded)."""
    queue_encoded(pipe, outputs_of(partition, stream, decisions), maxlen)


def queue_encoded(pipe: Any, outputs: list[Output], maxlen: int) -> None:
    """Append `outputs`, in order; each stream is trimmed (approximately, to `maxlen`:
    RATING_OUTPUT_MAXLEN, 0 for never) once per commit rather than per entry."""
    written: set[str] = set()
    for output in outputs:
        xadd(pipe, output.stream, output.data)
        written.add(output.stream)
    if maxlen:
        for output_stream in sorted(written):
            pipe.xtrim(output_stream, maxlen=maxlen, approximate=True)
