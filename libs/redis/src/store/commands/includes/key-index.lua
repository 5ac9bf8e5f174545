-- Include: The partition's index of keys (docs/design.md "Key index"): every key with a row, in
-- lexicographic order, kept as chunks — zsets `P:{pN}:kc:<bound>` of fewer than 128 keys (score 0) —
-- found through `P:{pN}:kx`, a zset of each chunk's bound (score 0). A chunk holds the keys from its
-- bound up to the next chunk's; the first chunk's bound may be '' (below every key). Small zsets are
-- listpacks: ~25 B a key instead of ~127 in one big zset (a skiplist). Every script reads and writes the
-- index through these functions only. Uses no other include.

-- A zset reaching zset-max-listpack-entries (128, Redis's default) becomes a skiplist for good: a chunk
-- never holds more than KEY_CHUNK_MAX. A full chunk is halved at KEY_CHUNK_HALF (its first half stays);
-- many keys at once into one chunk are sorted with it and written as pieces of at most KEY_CHUNK_FILL
-- (room for inserts before the next split); a chunk that falls below KEY_CHUNK_MERGE keys joins the chunk
-- before it when both fit in KEY_CHUNK_FILL. A key longer than 64 bytes (zset-max-listpack-value) makes
-- its chunk a skiplist: it costs what one big zset costs, nothing breaks.
local KEY_CHUNK_MAX, KEY_CHUNK_HALF, KEY_CHUNK_FILL, KEY_CHUNK_MERGE = 127, 64, 96, 32

local function key_chunk(base, bound)
  return base .. 'kc:' .. bound
end

-- The chunk bound of each key looked up in this script: schedule checks its keys, then adds the new
-- ones, and the adds reuse the checks' lookups.
local key_bounds = {}

-- A chunk split, merged or gone: the keys looked up to it may now be in another chunk.
local function forget_bound(bound)
  for key, cached in pairs(key_bounds) do
    if cached == bound then
      key_bounds[key] = nil
    end
  end
end

-- A new chunk takes keys from the one before it (split) or none (the first chunk, '', made).
local function add_bound(base, bound, split_from)
  redis.call('ZADD', base .. 'kx', 0, bound)
  if split_from then
    forget_bound(split_from)
  end
end

local function remove_bound(base, bound)
  redis.call('ZREM', base .. 'kx', bound)
  forget_bound(bound)
end

-- The keys grouped by the chunk that holds (or would hold) them: `{ bound = { keys } }`, a lookup per
-- key not looked up yet; a key below every bound goes to the chunk ''. Redis compares: Lua's `<`
-- follows the server's locale, and a byte loop in Lua costs more than the lookup.
local function key_groups(base, keys)
  local index = base .. 'kx'
  local groups = {}
  for _, key in ipairs(keys) do
    local bound = key_bounds[key]
    if bound == nil then
      bound = redis.call('ZREVRANGEBYLEX', index, '[' .. key, '-', 'LIMIT', 0, 1)[1] or ''
      key_bounds[key] = bound
    end
    local group = groups[bound]
    if group == nil then
      group = {}
      groups[bound] = group
    end
    group[#group + 1] = key
  end
  return groups
end

local function zadd_zero(name, keys, first, last)
  local entries = {}
  for i = first, last do
    entries[#entries + 1] = 0
    entries[#entries + 1] = keys[i]
  end
  return redis.call('ZADD', name, unpack(entries))
end

-- Writes a chunk's keys and more keys than half a chunk takes as pieces of at most KEY_CHUNK_FILL:
-- Redis sorts them (a scratch zset in the partition's slot, gone at once), the first piece keeps the
-- bound. Returns how many keys the pieces hold.
local function split_chunk(base, bound, keys)
  local chunk, scratch = key_chunk(base, bound), base .. 'kc~'
  for first = 1, #keys, 4000 do
    zadd_zero(scratch, keys, first, math.min(first + 3999, #keys))
  end
  redis.call('ZUNIONSTORE', scratch, 2, scratch, chunk)
  local sorted = redis.call('ZRANGE', scratch, 0, -1)
  redis.call('DEL', scratch, chunk)
  local pieces = math.ceil(#sorted / KEY_CHUNK_FILL)
  local size = math.ceil(#sorted / pieces)
  for first = 1, #sorted, size do
    local piece_bound = first == 1 and bound or sorted[first]
    zadd_zero(key_chunk(base, piece_bound), sorted, first, math.min(first + size - 1, #sorted))
    add_bound(base, piece_bound, bound)
  end
  return #sorted
end

-- Moves a chunk's keys from rank KEY_CHUNK_HALF on (Redis keeps them sorted) to a chunk under the
-- first of them, and returns that bound. Cheaper than split_chunk: no sort, no scratch zset.
local function halve_chunk(base, bound)
  local chunk = key_chunk(base, bound)
  local upper = redis.call('ZRANGE', chunk, KEY_CHUNK_HALF, -1)
  zadd_zero(key_chunk(base, upper[1]), upper, 1, #upper)
  redis.call('ZREMRANGEBYRANK', chunk, KEY_CHUNK_HALF, -1)
  add_bound(base, upper[1], bound)
  return upper[1]
end

local key_groups_added

-- Adds keys that belong in the chunk under `bound`, splitting it first when they would fill it.
-- Returns how many were new.
local function add_to_chunk(base, bound, keys)
  if #keys == 0 then
    return 0
  end
  local chunk = key_chunk(base, bound)
  local held = redis.call('ZCARD', chunk)
  if held + #keys <= KEY_CHUNK_MAX then
    if held == 0 then
      add_bound(base, bound)
    end
    return zadd_zero(chunk, keys, 1, #keys)
  elseif #keys > KEY_CHUNK_MAX - KEY_CHUNK_HALF then
    return split_chunk(base, bound, keys) - held
  end
  -- held > KEY_CHUNK_HALF here: each half has room for all the keys, which go where they now belong
  halve_chunk(base, bound)
  return key_groups_added(base, keys)
end

-- Adds keys, chunk by chunk. Returns how many were new.
function key_groups_added(base, keys)
  local added = 0
  for bound, group in pairs(key_groups(base, keys)) do
    added = added + add_to_chunk(base, bound, group)
  end
  return added
end

-- Adds keys (already there: unchanged). Returns how many were new.
local function key_index_add(base, keys)
  return key_groups_added(base, keys)
end

-- A chunk that lost keys: gone from the bounds when empty (Redis deleted the zset), or joined to the
-- chunk before it when both are small.
local function key_chunk_shrunk(base, bound)
  local chunk = key_chunk(base, bound)
  local held = redis.call('ZCARD', chunk)
  if held == 0 then
    remove_bound(base, bound)
  elseif held < KEY_CHUNK_MERGE and bound ~= '' then
    local before = redis.call('ZREVRANGEBYLEX', base .. 'kx', '(' .. bound, '-', 'LIMIT', 0, 1)[1]
    local into = before and key_chunk(base, before)
    if into and redis.call('ZCARD', into) + held <= KEY_CHUNK_FILL then
      local keys = redis.call('ZRANGE', chunk, 0, -1)
      zadd_zero(into, keys, 1, #keys)
      redis.call('DEL', chunk)
      remove_bound(base, bound)
    end
  end
end

-- Removes keys (absent ones: nothing). Returns how many were there.
local function key_index_remove(base, keys)
  local removed = 0
  for bound, group in pairs(key_groups(base, keys)) do
    local gone = redis.call('ZREM', key_chunk(base, bound), unpack(group))
    if gone > 0 then
      removed = removed + gone
      key_chunk_shrunk(base, bound)
    end
  end
  return removed
end

-- `{ key = true }` for each of the keys the index holds.
local function key_index_has(base, keys)
  local found = {}
  for bound, group in pairs(key_groups(base, keys)) do
    local scores = redis.call('ZMSCORE', key_chunk(base, bound), unpack(group))
    for i, key in ipairs(group) do
      if scores[i] then
        found[key] = true
      end
    end
  end
  return found
end

-- Up to `limit` keys from `min` to `max` in order, both in ZRANGEBYLEX's notation ('-', '+', '[key',
-- '(key'): a walk of the bounds from the chunk holding `min` up to `max` (a chunk whose bound lies past
-- it holds nothing in range), a few at a time, then of each chunk.
local function key_index_range(base, min, max, limit)
  local index, out = base .. 'kx', {}
  local from = '-'
  if min ~= '-' then
    local start = redis.call('ZREVRANGEBYLEX', index, '[' .. string.sub(min, 2), '-', 'LIMIT', 0, 1)[1]
    from = start and '[' .. start or '-'
  end
  while #out < limit do
    local bounds = redis.call('ZRANGEBYLEX', index, from, max, 'LIMIT', 0, 8)
    for _, bound in ipairs(bounds) do
      local keys = redis.call('ZRANGEBYLEX', key_chunk(base, bound), min, max, 'LIMIT', 0, limit - #out)
      for _, key in ipairs(keys) do
        out[#out + 1] = key
      end
      if #out == limit then
        return out
      end
    end
    if #bounds < 8 then
      return out
    end
    from = '(' .. bounds[#bounds]
  end
  return out
end
