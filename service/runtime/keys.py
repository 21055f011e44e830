"""The name of every Redis key and stream the service keeps, made here and nowhere else
(tests/unit/test_layout.py checks it): the store, read model and leases of each input stream
(StreamKeys, with the store's identity record `{S}:store`: storeid.py), the partitions' streams
(in_slot_of), the redrive ledger of a dead-letter stream (redriven_key), the advertised partition
layout (layout_key).

Every key of one input stream shares its slot: the keys are prefixed by the stream's name
when it carries a hash tag (`{fide.standard}:events.finished`, the domains layout of
partitions.py), else by `{<stream>}` (the stream's own key hashes to the same slot), so one
MULTI/EXEC covers them on Redis Cluster too. The keys, their types and contents:
`key_layout` below (the Redis keys page of the docs, docs/reference/keys.md, is made from it;
service/timeline.py: order keys and encodings).

The output and dead-letter streams are written in the same transaction: the domains layout
names them with the partition's hash tag; in the single layout on a cluster, name them with
the input stream's (e.g. `{events.finished}:ratings.updated`).

The names are stored data: a change of any of them loses the keys an earlier version wrote
(tests/unit/test_keys.py pins them).
"""

from __future__ import annotations

import msgspec

# The kinds of a stream's keys: the part of the name after the stream's prefix, up to the
# next ":" (`{S}:players:<system>:<pool>` is of kind "players").
CURSOR = "cursor"
PLAYERS = "players"
POOLS = "pools"
MARKERS = "markers"
ATTEMPTS = "attempts"
EVENTS = "events"
TIMELINE = "timeline"
HISTORY = "history"
RESULTS = "results"
REVISIONS = "revisions"  # the superseded results, each kept (D101)
EVENT_NAMES = "eventnames"  # each event's name, once (D122: history lines leave it out)
CATALOG = "catalog"
ENTRIES = "entries"
RANKING = "ranking"
NAMES = "names"
# The lists' indexes (D46-D49): last rated game, active ranking, labels, events by date, the
# latest list's changes, the list date.
PLAYED = "played"
ACTIVE = "active"
LABEL = "label"
LABELS = "labels"
DATED = "dated"
CARDS = "cards"
MOVES = "moves"
LISTDATE = "listdate"
# A paged close (D60): the close index, the staged changes of the list being published, and
# the stream's close in progress.
DUE = "due"
NEXTMOVES = "nextmoves"
CLOSING = "closing"
LOADING = "loading"  # a streamed load's checkpoint (D118)
LEASE = "lease"  # and its fence and token counter: `{S}:lease:fence`, `{S}:lease:token`
REPLICAS = "replicas"
STORE = "store"  # the store's identity record (service/runtime/storeid.py)
DURABLE = (
    "durable"  # a publisher's write that WAITAOF / WAIT wait for (service/runtime/durability.py)
)

# The kinds grouped by what their names and fields belong to (migrate.py moves a store by it).
BY_POOL = (  # `:<system>:<pool>[:<player id> | :<label kind>:<label>]`
    PLAYERS,
    HISTORY,
    ENTRIES,
    RANKING,
    NAMES,
    PLAYED,
    ACTIVE,
    LABEL,
    LABELS,
    DATED,
    CARDS,
    MOVES,
    LISTDATE,
    DUE,
    NEXTMOVES,
)
BY_DOMAIN = (TIMELINE,)  # `:<domain>`
SHARED = (  # one hash, fields of several pools
    POOLS,
    CATALOG,
    EVENTS,
    RESULTS,
    REVISIONS,
    EVENT_NAMES,
    MARKERS,
)
PER_STREAM = (
    CURSOR,
    ATTEMPTS,
    LEASE,
    REPLICAS,
    STORE,
    DURABLE,
    CLOSING,
    LOADING,
)  # progress, owner, identity

_FENCE = "fence"
_TOKEN = "token"
_REDRIVEN = "redriven"
_LAYOUTS = "rating-service:partitions"


def has_hash_tag(key: str) -> bool:
    """Whether Redis Cluster hashes `key` by a tag: a `{` followed, later, by a `}` with
    something between them (the first such pair counts)."""
    start = key.find("{")
    if start < 0:
        return False
    end = key.find("}", start + 1)
    return end > start + 1


def key_prefix(stream: str) -> str:
    """The prefix of a stream's store keys: in the stream's slot, whatever its name."""
    return stream if has_hash_tag(stream) else "{" + stream + "}"


def in_slot_of(owner: str, name: str) -> str:
    """`name` under `owner`'s hash tag: a partition's streams ("fide.standard",
    "events.finished" -> "{fide.standard}:events.finished"), or an output stream named for an
    input stream's slot ("events.finished", "ratings.updated" -> "{events.finished}:ratings.updated")."""
    return f"{key_prefix(owner)}:{name}"


def untagged(stream: str) -> str:
    """A stream's name without a leading hash tag ("{x}:ratings.updated" -> "ratings.updated")."""
    return stream.split("}:", 1)[1] if stream.startswith("{") and "}:" in stream else stream


def is_namespace(name: str) -> bool:
    """Whether `name` can prefix a stream's keys (StreamKeys' namespace): not empty, without
    ':' (the names' separator) or a brace (it would change the keys' hash tag)."""
    return bool(name) and not any(c in name for c in ":{}")


class StreamKeys:
    """The names of the keys that belong to one input stream. A `namespace` (for a replay
    into fresh keys) prefixes every name and keeps the stream's hash tag."""

    def __init__(self, stream: str, namespace: str | None = None):
        self.stream = stream
        self.prefix = (f"{namespace}:" if namespace else "") + key_prefix(stream) + ":"
        self.cursor = self.prefix + CURSOR
        self.pools = self.prefix + POOLS
        self.markers = self.prefix + MARKERS
        self.attempts = self.prefix + ATTEMPTS
        self.events = self.prefix + EVENTS
        self._players = self.prefix + PLAYERS
        self._timeline = self.prefix + TIMELINE
        self._history = self.prefix + HISTORY
        self.results = self.prefix + RESULTS
        self.revisions = self.prefix + REVISIONS
        self.event_names = self.prefix + EVENT_NAMES
        self.catalog = self.prefix + CATALOG
        self._entries = self.prefix + ENTRIES
        self._ranking = self.prefix + RANKING
        self._names = self.prefix + NAMES
        self._played = self.prefix + PLAYED
        self._active = self.prefix + ACTIVE
        self._label = self.prefix + LABEL
        self._labels = self.prefix + LABELS
        self._dated = self.prefix + DATED
        self._cards = self.prefix + CARDS
        self._moves = self.prefix + MOVES
        self._listdate = self.prefix + LISTDATE
        self._due = self.prefix + DUE
        self._nextmoves = self.prefix + NEXTMOVES
        self.closing = self.prefix + CLOSING
        self.loading = self.prefix + LOADING
        self.lease = self.prefix + LEASE
        self.lease_fence = f"{self.lease}:{_FENCE}"
        self.lease_token = f"{self.lease}:{_TOKEN}"
        self.replicas = self.prefix + REPLICAS
        self.store = self.prefix + STORE
        self.durable = self.prefix + DURABLE

    def players(self, system: str, pool: str) -> str:
        return f"{self._players}:{system}:{pool}"

    def timeline(self, domain: str) -> str:
        return f"{self._timeline}:{domain}"

    def history(self, system: str, pool: str, player_id: str) -> str:
        return f"{self._history}:{system}:{pool}:{player_id}"

    def entries(self, system: str, pool: str, player_id: str) -> str:
        return f"{self._entries}:{system}:{pool}:{player_id}"

    def ranking(self, system: str, pool: str) -> str:
        return f"{self._ranking}:{system}:{pool}"

    def names(self, system: str, pool: str) -> str:
        return f"{self._names}:{system}:{pool}"

    def played(self, system: str, pool: str) -> str:
        return f"{self._played}:{system}:{pool}"

    def active(self, system: str, pool: str) -> str:
        return f"{self._active}:{system}:{pool}"

    def label(self, system: str, pool: str, kind: str, value: str) -> str:
        """The ranking of the players with one label (`kind` federation or title)."""
        return f"{self._label}:{system}:{pool}:{kind}:{value}"

    def labels(self, system: str, pool: str) -> str:
        return f"{self._labels}:{system}:{pool}"

    def dated(self, system: str, pool: str) -> str:
        return f"{self._dated}:{system}:{pool}"

    def cards(self, system: str, pool: str) -> str:
        return f"{self._cards}:{system}:{pool}"

    def moves(self, system: str, pool: str) -> str:
        return f"{self._moves}:{system}:{pool}"

    def listdate(self, system: str, pool: str) -> str:
        return f"{self._listdate}:{system}:{pool}"

    def due(self, system: str, pool: str) -> str:
        return f"{self._due}:{system}:{pool}"

    def nextmoves(self, system: str, pool: str) -> str:
        return f"{self._nextmoves}:{system}:{pool}"


def redriven_key(dead_letter_stream: str) -> str:
    """The redrive ledger of a dead-letter stream: hash dead-letter id -> the input entry id it
    was re-appended as (the last one, after a redrive `--again`). Named after the stream: with
    a dead-letter stream named with the input stream's hash tag (as a cluster needs, e.g.
    `{events.finished}:events.rejected`), the ledger and the input stream share a slot."""
    return f"{dead_letter_stream}:{_REDRIVEN}"


def glob_escape(text_: str) -> str:
    """A literal for a Redis MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text_)


def layout_key(base: str) -> str:
    """Where a service whose RATING_INPUT_STREAMS starts with `base` advertises its layout
    (JSON of partitions.Layout): `rating-service:partitions:events.finished` by default."""
    return f"{_LAYOUTS}:{base}"


class KeyDoc(msgspec.Struct, frozen=True):
    """One Redis key: its name (with <placeholders>), its type and what it holds."""

    name: str
    type: str
    content: str


def key_layout(stream: str) -> tuple[KeyDoc, ...]:
    """Every key of input stream `stream`, named by StreamKeys (<system>, <pool>, <id> and
    <domain> in place of their values), with its type and content: the table of
    docs/reference/keys.md (docs/gen_reference.py)."""
    k = StreamKeys(stream)
    sp, spi = ("<system>", "<pool>"), ("<system>", "<pool>", "<id>")
    return (
        KeyDoc(k.cursor, "string", "id of the last input entry whose effect is committed"),
        KeyDoc(k.players(*sp), "hash", "player id -> `player.record/v1` JSON"),
        KeyDoc(k.pools, "hash", "`<system>:<pool>` -> pool state JSON (closed FIDE periods)"),
        KeyDoc(
            k.markers,
            "hash",
            "`event:<event_id>` / `period:<system>:<pool>:<period>` -> content digest",
        ),
        KeyDoc(k.attempts, "hash", "entry id -> attempts not yet committed (poison detection)"),
        KeyDoc(
            k.events,
            "hash",
            "event id -> the archived event (compact MessagePack, D100: order key, current content, "
            "revision, digest of its last results)",
        ),
        KeyDoc(
            k.timeline("<domain>"),
            "sorted set",
            "the domain's events in date order (lexicographic members: order key + event id)",
        ),
        KeyDoc(
            k.history(*spi),
            "string",
            "the player's record before each of their events, in date order: each member (order "
            "key + packed record, compact where shorter: D100) followed by its length (D121)",
        ),
        KeyDoc(
            k.results,
            "hash",
            "event id -> the last `ratings.updated/v1` published for it (compact MessagePack, D100)",
        ),
        KeyDoc(
            k.revisions,
            "hash",
            "`<event id>/<revision>` -> each earlier `ratings.updated/v1` of the event, kept when "
            "a later revision replaced it in `results` (compact MessagePack; revision 0: the "
            "first result): the audit trail (D101)",
        ),
        KeyDoc(
            k.event_names,
            "hash",
            "event id -> the event's name, as its last message gives it (the history lines leave it "
            "out: D122)",
        ),
        KeyDoc(
            k.entries(*spi),
            "hash",
            "event id (or `list/<period>`) -> order key + the player's history line (D102's "
            "encoding: MessagePack after the byte 0xC1; an earlier version's: plain MessagePack)",
        ),
        KeyDoc(
            k.ranking(*sp),
            "sorted set",
            "player id, score minus the rating (unrated players: 1,000,000): the ranked list",
        ),
        KeyDoc(
            k.names(*sp),
            "sorted set",
            "`word \\0 id` for each word of a player's name (case and accents folded): the search",
        ),
        *_list_keys(k),
        KeyDoc(
            k.catalog,
            "hash",
            "`<system>:<pool>` -> time (ms) of the last input entry (or import) that changed the pool",
        ),
        *_stream_keys(k),
    )


def _stream_keys(k: StreamKeys) -> tuple[KeyDoc, ...]:
    """The stream's owner, identity and publishers' confirmations, for key_layout."""
    return (
        KeyDoc(
            k.lease,
            "string",
            "`<token> <consumer>`, expiring after RATING_LEASE_MS: the replica that owns the stream",
        ),
        KeyDoc(
            k.lease_fence,
            "string",
            "the same value without expiry, written only when a lease is taken (every commit "
            "WATCHes it)",
        ),
        KeyDoc(k.lease_token, "string", "the fencing token counter (INCR on every acquisition)"),
        KeyDoc(k.replicas, "sorted set", "consumer -> heartbeat expiry (ms): the live replicas"),
        KeyDoc(
            k.store,
            "string",
            "the store's identity record (JSON): its store format, layout, partition, namespace, "
            "when and by which version it was created and last written, whether it was migrated; "
            "checked by every replica before it serves the stream (docs/operations/upgrades.md)",
        ),
        KeyDoc(
            k.durable,
            "string",
            "the last entry id a publisher confirmed durable, expiring after a minute: the write "
            "its WAITAOF / WAIT waits for, made after it saw the commit (D85)",
        ),
    )


def _list_keys(k: StreamKeys) -> tuple[KeyDoc, ...]:
    """The lists' indexes of a stream's pools (D46-D49), for key_layout."""
    sp = ("<system>", "<pool>")
    return (
        KeyDoc(
            k.played(*sp),
            "sorted set",
            "player id, score the day (proleptic ordinal) their last event with a rated game "
            "ended: who is active (D46)",
        ),
        KeyDoc(
            k.active(*sp),
            "sorted set",
            "the ranking's members and scores for the active players only (D46)",
        ),
        KeyDoc(
            k.label(*sp, "<kind>", "<label>"),
            "sorted set",
            "the ranking's members and scores of the players with one label (`<kind>` "
            "`federation` or `title`): the list's filters (D47)",
        ),
        KeyDoc(
            k.labels(*sp),
            "hash",
            "`<kind>:<label>` -> players with that label: the filters' choices (D47)",
        ),
        KeyDoc(
            k.dated(*sp),
            "sorted set",
            "event id, score the day its end date is: the latest events (D48)",
        ),
        KeyDoc(
            k.cards(*sp),
            "hash",
            "event id -> the event's summary for the latest events (MessagePack: name, dates, "
            "period, players, revision) (D48)",
        ),
        KeyDoc(
            k.moves(*sp),
            "sorted set",
            "player id, score the change on the last published list (FIDE; players whose rating "
            "moved): the biggest changes (D49)",
        ),
        KeyDoc(
            k.listdate(*sp),
            "string",
            "`<reference day> <first active day> <close's day> <close's first active day>`: the "
            "list date the active players are counted from (D46)",
        ),
        KeyDoc(
            k.due(*sp),
            "sorted set",
            "the close index (FIDE, D60): `<period>:<id>` for each period a player has games "
            "counted in, `k:<id>` for an imported K, `.` once built (lexicographic members): "
            "the players a close reads",
        ),
        KeyDoc(
            k.nextmoves(*sp),
            "sorted set",
            "during a close (D60): the changes of the list being published, renamed to the "
            "moves key by its last commit",
        ),
        KeyDoc(
            k.closing,
            "string",
            "the close in progress on this stream (D60, JSON): its entry, pool, period, the "
            "list's messages published of how many, the last index member done; removed by "
            "the close's last commit",
        ),
        KeyDoc(
            k.loading,
            "string",
            "a `rating-service load` of a history file (D118, JSON): the file, the first entry "
            "id's time, the lines, messages and bytes read, the counts, whether it finished; "
            "written in each chunk's transaction, read by a second run to resume",
        ),
    )
