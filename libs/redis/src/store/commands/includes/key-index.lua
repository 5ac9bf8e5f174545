-- Include: The partition's index of keys (docs/design.md "Key index"): every key with a row, in byte
-- order, kept as chunks of fewer than 128 keys (zsets, score 0). Small zsets are listpacks: ~25 B a key
-- instead of ~127 in one big zset (a skiplist). A chunk is named by its upper bound: `P:{pN}:kc:<bound>`
-- holds the keys below <bound> from the bound before it on, `P:{pN}:kc` (the last chunk) the keys from
-- the last bound on; `P:{pN}:kx` is a zset (score 0) of the bounds. Every bound's chunk holds keys; the
-- last chunk may hold none (then it does not exist). Every script reads and writes the index through
-- these functions only.
--- @include "includes/key-stretches"

-- A zset reaching zset-max-listpack-entries (128, Redis's default) becomes a skiplist for good: a chunk
-- never holds more than KEY_CHUNK_MAX. Keys that would overfill a chunk are written with its keys as
-- even pieces of at most KEY_CHUNK_FILL (room for inserts before the next split); a chunk that falls
-- below KEY_CHUNK_MERGE keys joins the one below it when both fit in KEY_CHUNK_FILL. A stretch of at
-- least KEY_CHUNK_READ keys reads its whole chunk (one ZRANGE: which of them it holds, how many, and
-- what a split needs) where fewer ask ZMSCORE. A key longer than 64 bytes (zset-max-listpack-value)
-- makes its chunk a skiplist: it costs what one big zset costs, nothing breaks.
local KEY_CHUNK_MAX, KEY_CHUNK_FILL, KEY_CHUNK_MERGE, KEY_CHUNK_READ = 127, 100, 32, 8

-- The keys of each chunk this script read whole, by name: schedule's adds reuse its checks' reads.
-- Forgotten once the chunk is written.
local chunk_reads = {}

local function key_chunk(base, bound)
  return bound and base .. 'kc:' .. bound or base .. 'kc'
end

-- ZADD of keys[first..last] with score 0. The score goes as the text '0' (a Lua number would be
-- formatted as a float per key), and the keys last first: a listpack zset looks for a new member's
-- place from its start, so keys that each go first are placed at once (ascending ones each went last,
-- a walk of the whole chunk).
local function zadd_zero(name, keys, first, last)
  if first > last then
    return 0
  end
  local entries = {}
  for i = last, first, -1 do
    entries[#entries + 1] = '0'
    entries[#entries + 1] = keys[i]
  end
  return redis.call('ZADD', name, unpack(entries))
end

-- `held` (a chunk's keys, in order) with keys[first..last] (ascending) among them, once each. Each
-- key's place is searched from the last one's, by steps that double and then by bisection: a key just
-- after the last costs a compare or two, keys past the chunk's end one search in all.
local function merged_keys(held, keys, first, last)
  local out, next_held = {}, 1
  for j = first, last do
    local key = keys[j]
    -- held[low - 1] lies below key (or low is next_held), held[high] not (or high is #held + 1)
    local low, high, step = next_held, next_held, 1
    while high <= #held and key_before(held[high], key) do
      low, high, step = high + 1, high + step, step * 2
    end
    high = math.min(high, #held + 1)
    while low < high do
      local mid = math.floor((low + high) / 2)
      if key_before(held[mid], key) then
        low = mid + 1
      else
        high = mid
      end
    end
    for p = next_held, low - 1 do
      out[#out + 1] = held[p]
    end
    next_held = low
    if out[#out] ~= key and held[low] ~= key then
      out[#out + 1] = key
    end
  end
  for p = next_held, #held do
    out[#out + 1] = held[p]
  end
  return out
end

-- Writes keys[first..last] (ascending, once each) as even pieces of at most KEY_CHUNK_FILL, each
-- bounded by the next one's first key, the last one the chunk of `bound`; `bounds` (ZADD arguments):
-- more bounds to add with theirs.
local function write_pieces(base, bound, keys, first, last, bounds)
  local size = math.ceil((last - first + 1) / math.ceil((last - first + 1) / KEY_CHUNK_FILL))
  for from = first, last, size do
    local to = math.min(from + size - 1, last)
    local above = to < last and keys[to + 1]
    zadd_zero(key_chunk(base, above or bound), keys, from, to)
    if above then
      bounds[#bounds + 1] = '0'
      bounds[#bounds + 1] = above
    end
  end
  if #bounds > 0 then
    redis.call('ZADD', base .. 'kx', unpack(bounds))
    generation = generation + 1
  end
end

-- How many of `held` (in order) lie below `key`, or with `after`, at or below it.
local function count_below(held, key, after)
  local low, high = 1, #held + 1
  while low < high do
    local mid = math.floor((low + high) / 2)
    if key_before(held[mid], key) or (after and held[mid] == key) then
      low = mid + 1
    else
      high = mid
    end
  end
  return low - 1
end

-- Adds keys[first..last] (ascending) to the chunk of `bound`. Keys that would take it past
-- KEY_CHUNK_MAX split it: the larger run of its keys below or above all the new ones stays in the zset
-- (when both it and what goes have KEY_CHUNK_MERGE keys at least) — renamed under the key after it when it is the lower one
-- — and the rest, the new keys among them, goes to a chunk of its own, or as even pieces (write_pieces)
-- when more than KEY_CHUNK_MAX; else the lot is written anew. An ascending caller's keys lie past all
-- the chunk's: only they are written. Returns how many were new.
local function add_stretch(base, bound, keys, first, last)
  local chunk = key_chunk(base, bound)
  local read = chunk_reads[chunk]
  chunk_reads[chunk] = nil
  local held = read and #read or redis.call('ZCARD', chunk)
  if held + last - first + 1 <= KEY_CHUNK_MAX then
    return zadd_zero(chunk, keys, first, last)
  end
  read = read or redis.call('ZRANGE', chunk, 0, -1)
  local below = count_below(read, keys[first])
  local above = held - count_below(read, keys[last], true)
  -- the chunk's keys read[lower..upper] go with the new ones, the rest stay (neither side too small)
  local lower, upper, count = 1, held, last - first + 1
  if below >= KEY_CHUNK_MERGE and below >= above and held - below + count >= KEY_CHUNK_MERGE then
    lower = below + 1
    local split = keys[first]
    redis.call('RENAME', chunk, key_chunk(base, split))
    if below < held then
      redis.call('ZREMRANGEBYRANK', key_chunk(base, split), below, -1)
    end
    redis.call('ZADD', base .. 'kx', '0', split)
    generation = generation + 1
  elseif above >= KEY_CHUNK_MERGE and held - above + count >= KEY_CHUNK_MERGE then
    upper = held - above
    bound = read[upper + 1]
    if upper > 0 then
      redis.call('ZREMRANGEBYRANK', chunk, 0, upper - 1)
    end
    redis.call('ZADD', base .. 'kx', '0', bound)
    generation = generation + 1
  else
    redis.call('DEL', chunk)
  end
  if upper - lower + 1 + count <= KEY_CHUNK_MAX then
    -- one chunk: no merge, no order needed
    zadd_zero(key_chunk(base, bound), read, lower, upper)
    return zadd_zero(key_chunk(base, bound), keys, first, last)
  end
  local all = merged_keys({ unpack(read, lower, upper) }, keys, first, last)
  write_pieces(base, bound, all, 1, #all, {})
  return #all - (upper - lower + 1)
end

-- Adds keys (already there: unchanged). Returns how many were new.
local function key_index_add(base, keys)
  local added = 0
  key_stretches(base, keys, function(bound, stretch, first, last)
    added = added + add_stretch(base, bound, stretch, first, last)
  end)
  return added
end

-- The keys of the chunk under bound `lower` move into the chunk above it (`upper`), and `lower` goes.
local function join_chunks(base, lower, upper)
  local from = key_chunk(base, lower)
  local keys = redis.call('ZRANGE', from, 0, -1)
  zadd_zero(key_chunk(base, upper), keys, 1, #keys)
  redis.call('DEL', from)
  redis.call('ZREM', base .. 'kx', lower)
  generation, chunk_reads = generation + 1, {}
end

-- A chunk of `held` keys, under KEY_CHUNK_MERGE, joins the one below it when both fit in
-- KEY_CHUNK_FILL (a walk of removals in order has just thinned that one too; one that empties the index
-- from below finds none there and pays one lookup).
local function join_below(base, bound, held)
  local below = redis.call('ZRANGE', base .. 'kx', bound and '(' .. bound or '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  if below and redis.call('ZCARD', key_chunk(base, below)) + held <= KEY_CHUNK_FILL then
    join_chunks(base, below, bound)
  end
end

-- A chunk that lost `gone` keys: its bound goes when it is empty (Redis deleted the zset); it joins the
-- one below when it has just fallen below KEY_CHUNK_MERGE (once, not at every later removal: a chunk
-- that did not fit stays as it is until it empties or one above it joins it).
local function chunk_shrunk(base, bound, gone)
  local held = redis.call('ZCARD', key_chunk(base, bound))
  if held == 0 and bound then
    redis.call('ZREM', base .. 'kx', bound)
    generation = generation + 1
  elseif held > 0 and held < KEY_CHUNK_MERGE and held + gone >= KEY_CHUNK_MERGE then
    join_below(base, bound, held)
  end
end

-- Removes keys[first..last] of the chunk of `bound`. Returns how many were there.
local function remove_stretch(base, bound, keys, first, last)
  local chunk = key_chunk(base, bound)
  chunk_reads[chunk] = nil
  local gone = redis.call('ZREM', chunk, unpack(keys, first, last))
  if gone > 0 then
    chunk_shrunk(base, bound, gone)
  end
  return gone
end

-- Removes keys (absent ones: nothing). Returns how many were there.
local function key_index_remove(base, keys)
  local removed = 0
  key_stretches(base, keys, function(bound, stretch, first, last)
    removed = removed + remove_stretch(base, bound, stretch, first, last)
  end)
  return removed
end

-- `{ key = true }` for each of the keys the index holds.
local function key_index_has(base, keys)
  local found = {}
  key_stretches(base, keys, function(bound, stretch, first, last)
    local chunk = key_chunk(base, bound)
    if last - first + 1 >= KEY_CHUNK_READ then
      local read = redis.call('ZRANGE', chunk, 0, -1)
      chunk_reads[chunk] = read
      local held = {}
      for _, key in ipairs(read) do
        held[key] = true
      end
      for i = first, last do
        found[stretch[i]] = held[stretch[i]]
      end
    else
      local scores = redis.call('ZMSCORE', chunk, unpack(stretch, first, last))
      for i = first, last do
        if scores[i - first + 1] then
          found[stretch[i]] = true
        end
      end
    end
  end, true)
  return found
end

-- Up to `limit` keys from `min` to `max` in order, both in ZRANGEBYLEX's notation ('-', '+', '[key',
-- '(key'): the chunks from the one holding `min` on, their bounds read 8 at a time, up to the first
-- whose bound lies past `max` (the chunks after it hold nothing in range). `take`: the keys read also
-- leave the index, chunk by chunk (no lookup or compare: the walk knows their chunks and range).
local function key_index_range(base, min, max, limit, take)
  local out = {}
  local from = min == '-' and '-' or '(' .. string.sub(min, 2)
  local max_key, inclusive = string.sub(max, 2), string.sub(max, 1, 1) == '['
  local function past_max(bound)
    if max == '+' then
      return false
    elseif inclusive then
      return key_before(max_key, bound)
    end
    return not key_before(bound, max_key)
  end
  while true do
    local bounds = redis.call('ZRANGEBYLEX', base .. 'kx', from, '+', 'LIMIT', 0, 8)
    -- after fewer than 8 bounds, the last chunk
    for i = 1, #bounds < 8 and #bounds + 1 or 8 do
      local bound = bounds[i] or false
      local keys = redis.call('ZRANGEBYLEX', key_chunk(base, bound), min, max, 'LIMIT', 0, limit - #out)
      for _, key in ipairs(keys) do
        out[#out + 1] = key
      end
      if take and #keys > 0 then
        -- the keys read are all the chunk holds from min to the last of them: one range removal (a ZREM
        -- of each would look each up in the listpack)
        local chunk = key_chunk(base, bound)
        chunk_reads[chunk] = nil
        chunk_shrunk(base, bound, redis.call('ZREMRANGEBYLEX', chunk, min, '[' .. keys[#keys]))
      end
      if #out == limit or not bound or past_max(bound) then
        return out
      end
    end
    from = '(' .. bounds[8]
  end
end
