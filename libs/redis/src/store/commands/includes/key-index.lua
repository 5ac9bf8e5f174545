-- Include: The partition's index of keys (docs/design.md "Key index"): every key with a row, in byte
-- order, kept as chunks of fewer than 128 keys (zsets, score 0). Small zsets are listpacks: ~25 B a key
-- instead of ~127 in one big zset (a skiplist). A chunk is named by its upper bound: `P:{pN}:kc:<bound>`
-- holds the keys below <bound> from the bound before it on, `P:{pN}:kc` (the last chunk) the keys from
-- the last bound on; `P:{pN}:kx` is a zset (score 0) of the bounds. Every bound's chunk holds keys; the
-- last chunk may hold none (then it does not exist). Every script reads and writes the index through
-- these functions only. Uses no other include.

-- A zset reaching zset-max-listpack-entries (128, Redis's default) becomes a skiplist for good: a chunk
-- never holds more than KEY_CHUNK_MAX. Keys that would overfill a chunk are written with its keys as
-- pieces of at most KEY_CHUNK_FILL (room for inserts before the next split); a chunk that falls below
-- KEY_CHUNK_MERGE keys joins a neighbour when both fit in KEY_CHUNK_FILL. A key longer than 64 bytes
-- (zset-max-listpack-value) makes its chunk a skiplist: it costs what one big zset costs, nothing breaks.
local KEY_CHUNK_MAX, KEY_CHUNK_FILL, KEY_CHUNK_MERGE = 127, 96, 32

local function key_chunk(base, bound)
  return bound and base .. 'kc:' .. bound or base .. 'kc'
end

local byte = string.byte

-- Whether key `a` sorts before `b` in byte order, as Redis's lex ranges do. Not Lua's `<`, which follows
-- the server's locale (strcoll). Eight bytes per string.byte call: ~0.5 µs for two 16-byte keys.
local function key_before(a, b)
  if a == b then
    return false
  end
  local i = 1
  while true do
    local a1, a2, a3, a4, a5, a6, a7, a8 = byte(a, i, i + 7)
    local b1, b2, b3, b4, b5, b6, b7, b8 = byte(b, i, i + 7)
    -- a string that ended (nil) sorts first
    if a1 ~= b1 then
      return (a1 or -1) < (b1 or -1)
    elseif a2 ~= b2 then
      return (a2 or -1) < (b2 or -1)
    elseif a3 ~= b3 then
      return (a3 or -1) < (b3 or -1)
    elseif a4 ~= b4 then
      return (a4 or -1) < (b4 or -1)
    elseif a5 ~= b5 then
      return (a5 or -1) < (b5 or -1)
    elseif a6 ~= b6 then
      return (a6 or -1) < (b6 or -1)
    elseif a7 ~= b7 then
      return (a7 or -1) < (b7 or -1)
    elseif a8 ~= b8 then
      return (a8 or -1) < (b8 or -1)
    end
    i = i + 8
  end
end

-- The bound of the chunk that holds (or would hold) each key looked up in this script, false for the
-- last chunk: schedule checks its keys, then adds the new ones, and the adds reuse the checks' lookups.
-- Forgotten whenever a bound is made or goes.
local key_bounds = {}

local function bound_above(base, key)
  local bound = key_bounds[key]
  if bound == nil then
    bound = redis.call('ZRANGEBYLEX', base .. 'kx', '(' .. key, '+', 'LIMIT', 0, 1)[1] or false
    key_bounds[key] = bound
  end
  return bound
end

-- Calls visit(bound, keys, first, last) for each stretch keys[first..last] that one chunk holds (or
-- would hold), in turn. Keys in ascending byte order cost a compare each (to the key before) and one
-- lookup per chunk they fall in, where the chunk's end is found by bisection; a key below the one before
-- it starts a new ascending run. `visit` may change the index: each stretch is looked up after the last
-- one's visit, and a later stretch's keys lie above every key an earlier visit touched.
local function key_stretches(base, keys, visit)
  local n, first = #keys, 1
  while first <= n do
    local top = first
    while top < n and not key_before(keys[top + 1], keys[top]) do
      top = top + 1
    end
    while first <= top do
      local bound = bound_above(base, keys[first])
      local last = top
      if bound and not key_before(keys[top], bound) then
        -- keys[first] lies below the bound, keys[top] not: the last one below lies between
        local below, above = first, top
        while above - below > 1 do
          local mid = math.floor((below + above) / 2)
          if key_before(keys[mid], bound) then
            below = mid
          else
            above = mid
          end
        end
        last = below
      end
      visit(bound, keys, first, last)
      first = last + 1
    end
  end
end

local function zadd_zero(name, keys, first, last)
  local entries = {}
  for i = first, last do
    entries[#entries + 1] = 0
    entries[#entries + 1] = keys[i]
  end
  return redis.call('ZADD', name, unpack(entries))
end

-- `held` (a chunk's keys, in order) with keys[first..last] (ascending) among them, once each: each key's
-- place found by bisection from the last one's, so keys past the chunk's end cost one bisection in all.
local function merged_keys(held, keys, first, last)
  local out, next_held = {}, 1
  for j = first, last do
    local key = keys[j]
    local low, high = next_held, #held + 1
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

-- Adds keys[first..last] (ascending) to the chunk of `bound`. Keys that would take it past KEY_CHUNK_MAX
-- are merged with its keys and the lot written as even pieces of at most KEY_CHUNK_FILL: each piece
-- bounded by the next one's first key, the last keeping the chunk's name. Returns how many were new.
local function add_stretch(base, bound, keys, first, last)
  local chunk = key_chunk(base, bound)
  local held = redis.call('ZCARD', chunk)
  if held + last - first + 1 <= KEY_CHUNK_MAX then
    return zadd_zero(chunk, keys, first, last)
  end
  local all = merged_keys(redis.call('ZRANGE', chunk, 0, -1), keys, first, last)
  redis.call('DEL', chunk)
  local size = math.ceil(#all / math.ceil(#all / KEY_CHUNK_FILL))
  local bounds = {}
  for from = 1, #all, size do
    local to = math.min(from + size - 1, #all)
    local above = all[to + 1]
    zadd_zero(key_chunk(base, above or bound), all, from, to)
    if above then
      bounds[#bounds + 1] = 0
      bounds[#bounds + 1] = above
    end
  end
  if #bounds > 0 then
    redis.call('ZADD', base .. 'kx', unpack(bounds))
    key_bounds = {}
  end
  return #all - held
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
  key_bounds = {}
end

-- A chunk of `held` keys, under KEY_CHUNK_MERGE, joins its neighbour below (a walk of removals in order
-- has just thinned it too), else the one above, when both fit in KEY_CHUNK_FILL.
local function join_neighbour(base, bound, held)
  local index = base .. 'kx'
  local below = redis.call('ZRANGE', index, bound and '(' .. bound or '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  if below and redis.call('ZCARD', key_chunk(base, below)) + held <= KEY_CHUNK_FILL then
    return join_chunks(base, below, bound)
  elseif bound then
    local above = redis.call('ZRANGEBYLEX', index, '(' .. bound, '+', 'LIMIT', 0, 1)[1] or false
    if redis.call('ZCARD', key_chunk(base, above)) + held <= KEY_CHUNK_FILL then
      join_chunks(base, bound, above)
    end
  end
end

-- A chunk that lost `gone` keys: its bound goes when it is empty (Redis deleted the zset); it joins a
-- neighbour when it has just fallen below KEY_CHUNK_MERGE (once, not at every later removal: a chunk
-- whose neighbours were too full stays as it is until it empties).
local function chunk_shrunk(base, bound, gone)
  local held = redis.call('ZCARD', key_chunk(base, bound))
  if held == 0 and bound then
    redis.call('ZREM', base .. 'kx', bound)
    key_bounds = {}
  elseif held > 0 and held < KEY_CHUNK_MERGE and held + gone >= KEY_CHUNK_MERGE then
    join_neighbour(base, bound, held)
  end
end

-- Removes keys[first..last] of the chunk of `bound`. Returns how many were there.
local function remove_stretch(base, bound, keys, first, last)
  local gone = redis.call('ZREM', key_chunk(base, bound), unpack(keys, first, last))
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
    local scores = redis.call('ZMSCORE', key_chunk(base, bound), unpack(stretch, first, last))
    for i = first, last do
      if scores[i - first + 1] then
        found[stretch[i]] = true
      end
    end
  end)
  return found
end

-- Up to `limit` keys from `min` to `max` in order, both in ZRANGEBYLEX's notation ('-', '+', '[key',
-- '(key'): the chunks from the one holding `min` on, their bounds read 8 at a time, up to the first
-- whose bound lies past `max` (the chunks after it hold nothing in range). `take`: the keys read also
-- leave the index, chunk by chunk (no lookup: the walk knows their chunks).
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
        remove_stretch(base, bound, keys, 1, #keys)
      end
      if #out == limit or not bound or past_max(bound) then
        return out
      end
    end
    from = '(' .. bounds[8]
  end
end
