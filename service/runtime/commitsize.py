"""What one commit writes, counted before it is sent, and the two limits on it (D91).

A commit's writes (store.ledger_writes: records, states, archives, histories, the read model)
and its outputs (outputs.outputs_of: ratings.updated messages, dead letters) are built in full
before MULTI. Their bytes, the arguments of every command, are what Redis receives and keeps
(the cursor, XACK and XTRIM add a few hundred). Two settings bound them:

- RATING_MAX_MESSAGE_BYTES: the largest ratings.updated (or list) message one entry may
  publish: what every subscriber must read whole;
- RATING_MAX_COMMIT_BYTES: the most one MULTI/EXEC may write, a correction's cascade
  included: what Redis holds in the transaction's queue and the service in its buffers.

A commit of several entries over a limit is made of fewer (`shrunk`); a single entry over one
is refused `too_large`, naming the figure, the limit and the setting, and its commit then
writes only the dead letter, the cursor and the XACK: nothing of the event.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from service.runtime.outputs import Output
from service.runtime.store import Command


def argument_bytes(value: Any) -> int:
    """The bytes of one command argument as redis-py sends it."""
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode())
    return len(repr(value))  # numbers: their digits


class CommitWrites(NamedTuple):
    """A commit's writes (commands) and outputs, with what they weigh; `owners[i]`: the index of
    the decision `outputs[i]` is of."""

    commands: list[Command]
    outputs: list[Output]
    owners: list[int]

    @property
    def bytes(self) -> int:
        """The arguments' bytes: every command's, and each output's message and stream name
        (argument_bytes, its common cases inline: a cascade's commit has ~130,000 arguments)."""
        written = 0
        for command in self.commands:
            for a in command:
                kind = type(a)
                if kind is str:
                    written += len(a) if a.isascii() else len(a.encode())
                elif kind is bytes:
                    written += len(a)
                elif kind is int:
                    written += len(repr(a))
                else:
                    written += argument_bytes(a)
        return written + sum(len(o.data) + len(o.stream) for o in self.outputs)


class Over(NamedTuple):
    """A commit over a limit: the entries of it to try next (0: refuse the first alone), and
    the one line that says which limit, by how much (the refusal's message)."""

    keep: int
    message: str


class CommitLimits(NamedTuple):
    """RATING_MAX_MESSAGE_BYTES and RATING_MAX_COMMIT_BYTES."""

    max_message_bytes: int
    max_commit_bytes: int

    @classmethod
    def of(cls, settings: Any) -> CommitLimits:
        return cls(settings.max_message_bytes, settings.max_commit_bytes)

    def over(self, writes: CommitWrites, entries: int) -> Over | None:
        """None when the writes of a commit of `entries` decisions keep to both limits. Else
        what to try instead: the entries before the first whose message is too big; for a
        commit too big, fewer entries in proportion to its bytes (a single entry: refused)."""
        for output, owner in zip(writes.outputs, writes.owners):
            if output.rated and len(output.data) > self.max_message_bytes:
                return Over(
                    owner,
                    (
                        f"its ratings.updated message would be {len(output.data):,} bytes, over the "
                        f"limit of {self.max_message_bytes:,} (RATING_MAX_MESSAGE_BYTES)"
                    ),
                )
        size = writes.bytes
        if size <= self.max_commit_bytes:
            return None
        keep = (
            max(1, min(entries - 1, entries * self.max_commit_bytes // size)) if entries > 1 else 0
        )
        return Over(
            keep,
            (
                f"its commit would write {size:,} bytes to Redis, over the limit of "
                f"{self.max_commit_bytes:,} (RATING_MAX_COMMIT_BYTES)"
            ),
        )
