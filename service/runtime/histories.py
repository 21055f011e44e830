"""A player's history in Redis (D121): one string per player and pool,
`{S}:history:<system>:<pool>:<id>`, holding the members (order key + packed state, service/
timeline.py) in order, each followed by its length (`timeline.join_history`).

A sorted set kept each member in a node of its own: on Redis 7 about 100 bytes of pointers,
hash entry and allocator rounding beside a 130-200 byte FIDE member, the largest kind of key of
a history (D120). One string per player costs the members and their one- or three-byte lengths.

Two scripts do what ZADD, ZREM and ZRANGE BYLEX did, for many keys a call (all of one stream's
keys share its hash tag, so this holds on a Redis Cluster too):

- `MERGE`: per key, the members removed, then the members added, in member order (bytes, as a
  sorted set of one score orders them); adding a member already there changes nothing. Members
  that all come after the last one stored (every event rated in date order) are appended
  without parsing the others (a value past APPEND_FROM is not even read, only its last
  member's bytes): with SET up to APPEND_FROM bytes, which allocates the value to
  its size (APPEND would leave up to as much again free for the next append), with APPEND
  past it, whose cost is what is added, not the history (a SET of 50 kB cost Redis 66 µs an
  append, against 2 µs for a ZADD). Any other change writes the value whole with SET.
- `FROM`: per key, the stored bytes from the first member whose order key is at or after a
  key (what a cascade re-rates from), read from the end.

Member order is compared byte by byte in the scripts: Lua's `<` on strings follows the
server's collation locale.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from service.rating.ledger import Changes
from service.runtime.keys import StreamKeys, glob_escape
from service.runtime.lua import compact_lua
from service.runtime.replies import text
from service.timeline import split_history

# The length of the member that ends at `pos` and the bytes that say it (timeline._trailer),
# and byte order of two members.
_COMMON = """
local function size_at(s, pos)
  local b = string.byte(s, pos)
  if b < 128 then return b, 1 end
  return (b - 128) * 65536 + string.byte(s, pos - 1) * 256 + string.byte(s, pos - 2), 3
end
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
"""

# a's n bytes from i against b's from j: -1, 0 or 1, six bytes at a time as one number (exact
# in a double): two calls where a byte at a time took twelve, and order keys share their first
# five or six bytes (the system's prefix, the end date's high bytes). FROM compares a member
# with the key at each step of its walk; MERGE's few comparisons keep the shorter `before`
# (its text is sent with every commit: service/runtime/lua.py). D143.
_COMPARE = """
local byte = string.byte
local function word(s, i)
  local a, b, c, d, e, f = byte(s, i, i + 5)
  return ((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f
end
local function compare(a, i, b, j, n)
  local k = 0
  while k + 6 <= n do
    local x, y = word(a, i + k), word(b, j + k)
    if x ~= y then return x < y and -1 or 1 end
    k = k + 6
  end
  while k < n do
    local x, y = byte(a, i + k), byte(b, j + k)
    if x ~= y then return x < y and -1 or 1 end
    k = k + 1
  end
  return 0
end
"""

# The bytes that say a member's length after it (timeline._trailer).
_TRAILER = """
local function trailer(n)
  if n < 128 then return string.char(n) end
  return string.char(n % 256, math.floor(n / 256) % 256, 128 + math.floor(n / 65536))
end
"""

# A history up to this size is written whole by an append (SET: allocated to its size); a
# longer one is appended to (APPEND: a copy of what is added, not of the history, for a
# platform's players of thousands of games; Redis then allocates up to twice the value).
APPEND_FROM = 16_384

# KEYS: the histories; ARGV, for each key in turn: the number of members removed, the number
# added, the removed, then the added in member order.
MERGE = compact_lua(
    _COMMON
    + _TRAILER
    + """
local at = 1
for k = 1, #KEYS do
  local removed, added = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
  at = at + 2
  local gone = {}
  for j = 1, removed do gone[ARGV[at]] = true; at = at + 1 end
  local new = {}
  for j = 1, added do new[j] = ARGV[at]; at = at + 1 end
  local size = redis.call('STRLEN', KEYS[k])
  local stored = nil  -- the value, read whole where it is small (one call, not two ranges)
  if size <= APPEND_FROM then stored = redis.call('GET', KEYS[k]) or '' end
  local after_last = removed == 0
  if after_last and size > 0 and added > 0 then
    local last
    if stored then
      local n, h = size_at(stored, size)
      last = string.sub(stored, size - h - n + 1, size - h)
    else
      local tail = redis.call('GETRANGE', KEYS[k], size - 3, size - 1)
      local n, h = size_at(tail, #tail)
      last = redis.call('GETRANGE', KEYS[k], size - h - n, size - h - 1)
    end
    after_last = before(last, new[1])
  end
  if after_last then
    if added > 0 then
      local parts = {}
      for j = 1, added do parts[j] = new[j] .. trailer(#new[j]) end
      local more = table.concat(parts)
      if stored and size + #more <= APPEND_FROM then
        redis.call('SET', KEYS[k], stored .. more)
      else
        redis.call('APPEND', KEYS[k], more)
      end
    end
  else
    stored = stored or redis.call('GET', KEYS[k]) or ''
    local kept, pos = {}, #stored
    while pos > 0 do
      local n, h = size_at(stored, pos)
      local stop = pos - h
      local m = string.sub(stored, stop - n + 1, stop)
      if not gone[m] then kept[#kept + 1] = m end
      pos = stop - n
    end
    local out, i, j = {}, #kept, 1
    while i >= 1 or j <= added do
      local m
      if j > added then m = kept[i]; i = i - 1
      elseif i < 1 then m = new[j]; j = j + 1
      elseif kept[i] == new[j] then m = new[j]; i = i - 1; j = j + 1
      elseif before(kept[i], new[j]) then m = kept[i]; i = i - 1
      else m = new[j]; j = j + 1 end
      out[#out + 1] = m .. trailer(#m)
    end
    if #out == 0 then redis.call('DEL', KEYS[k]) else redis.call('SET', KEYS[k], table.concat(out)) end
  end
end
return #KEYS
""".replace("APPEND_FROM", str(APPEND_FROM))
)

# KEYS: the histories; ARGV[1]: an order key. Per key, the stored bytes from the first member
# whose order key is at or after it ("" for none).
FROM = compact_lua(
    _COMMON
    + _COMPARE
    + """
local start = ARGV[1]
local out = {}
for k = 1, #KEYS do
  local stored = redis.call('GET', KEYS[k]) or ''
  local pos = #stored
  -- the whole value when its first member is at or after start (no later member is before it)
  if pos > 0 and pos >= #start and compare(stored, 1, start, 1, #start) >= 0 then pos = 0 end
  while pos > 0 do
    local n, h = size_at(stored, pos)
    local stop = pos - h
    local at = stop - n + 1
    if n >= #start then
      if compare(stored, at, start, 1, #start) < 0 then break end
    elseif before(string.sub(stored, at, stop), start) then break end
    pos = stop - n
  end
  out[k] = string.sub(stored, pos + 1)
end
return out
"""
)

# Keys and members a MERGE call (at most three arguments each: under packing.LARGE_COMMAND,
# so hiredis packs it): a commit's (one member per player of RATING_COMMIT_PLAYERS 4,096
# players) in one or two; a replay's whole state and a load's chunk in several.
MERGE_ITEMS = 6_000
# Histories a FROM call: about 13 ms of Redis for 1,000 short histories (a cascade's players).
FROM_KEYS = 1_000


def history_writes(keys: StreamKeys, changes: Changes) -> Iterator[tuple[Any, ...]]:
    """The EVALs of MERGE that write a change set's histories (MemberChanges per player)."""
    names: list[str] = []
    args: list[Any] = []
    items = 0
    for (system, pool, pid), members in changes.histories.items():
        if not members.added and not members.removed:
            continue
        names.append(keys.history(system, pool, pid))
        args += (len(members.removed), len(members.added), *members.removed)
        args += sorted(members.added)
        items += 1 + len(members.removed) + len(members.added)
        if items >= MERGE_ITEMS:
            yield ("EVAL", MERGE, len(names), *names, *args)
            names, args, items = [], [], 0
    if names:
        yield ("EVAL", MERGE, len(names), *names, *args)


def queue_from(pipe: Any, names: list[str], start: bytes) -> None:
    """Queue on `pipe` FROM's reads of the histories `names` from the order key `start`, a
    call per FROM_KEYS keys; `members_from` parses the replies."""
    for first in range(0, len(names), FROM_KEYS):
        chunk = names[first : first + FROM_KEYS]
        pipe.eval(FROM, len(chunk), *chunk, start)


def members_from(replies: Iterator[list[bytes]], count: int) -> list[list[bytes]]:
    """The members of `count` histories read by queue_from's calls (their replies, in order)."""
    out: list[list[bytes]] = []
    for _ in range(0, count, FROM_KEYS):
        out.extend(split_history(stored) for stored in next(replies))
    return out


# ------------------------------------------------------------------ a store of format 2 or earlier

# KEYS: histories; each one still a sorted set becomes the string of its members (ZRANGE's
# order: bytes, all scores 0). Returns how many were.
CONVERT = compact_lua(
    _TRAILER
    + """
local n = 0
for k = 1, #KEYS do
  if redis.call('TYPE', KEYS[k]).ok == 'zset' then
    local parts = {}
    for i, m in ipairs(redis.call('ZRANGE', KEYS[k], 0, -1)) do parts[i] = m .. trailer(#m) end
    redis.call('DEL', KEYS[k])
    if #parts > 0 then redis.call('SET', KEYS[k], table.concat(parts)) end
    n = n + 1
  end
end
return n
"""
)
CONVERT_KEYS = 200  # histories a CONVERT call: a player's history is at most a few hundred members


async def sorted_set_histories(client: Any, keys: StreamKeys) -> list[str]:
    """The histories of `keys`' store still kept as sorted sets (D121: a store of format 2 or
    earlier), which `convert` makes strings."""
    pattern = glob_escape(keys.history("", "", "")[:-2]) + "*"  # "...:history:" + anything
    names = [text(k) async for k in client.scan_iter(match=pattern, count=1_000)]
    found: list[str] = []
    for first in range(0, len(names), 1_000):
        chunk = names[first : first + 1_000]
        async with client.pipeline(transaction=False) as pipe:
            for name in chunk:
                pipe.type(name)
            kinds = await pipe.execute()
        found += [name for name, kind in zip(chunk, kinds) if text(kind) == "zset"]
    return found


async def convert(client: Any, names: list[str]) -> int:
    """Each of the histories `names` that is still a sorted set made the string of its
    members, one script a CONVERT_KEYS keys (atomic per call; a key done is not done again)."""
    done = 0
    for first in range(0, len(names), CONVERT_KEYS):
        chunk = names[first : first + CONVERT_KEYS]
        done += int(await client.eval(CONVERT, len(chunk), *chunk))
    return done
