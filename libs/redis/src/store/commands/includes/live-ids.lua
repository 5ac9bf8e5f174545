-- Include: The live ids of a partition (docs/design.md "Live ids"), what `check(id)` and `snapshot()` read:
-- one bit per id, not a hash entry (id → key cost ~80 bytes per pending timer). Ids are `<seq>p<M>` with a
-- dense counter per partition M, so id `<seq>p<M>` is bit `seq mod ID_CHUNK` of the bitmap
-- `P:{pN}:i:<M>:<seq div ID_CHUNK>` of the partition N holding its row (N = M unless a repartition moved
-- the row: it keeps its id). The set `P:{pN}:ic` names those bitmaps (`<M>:<chunk>`) for snapshot(). A
-- bitmap that empties goes, unless new ids of this partition still land in it (store/live-ids.ts ID_CHUNK).
-- Uses no other include.
local ID_CHUNK = 65536

-- The bitmap suffix `<M>:<chunk>` and bit offset of an id, or nil for a string that is no id of ours.
local function id_bit(id)
  local seq, origin = string.match(id, '^(%d+)p(%d+)$')
  if not seq then
    return nil
  end
  local chunk = math.floor(tonumber(seq) / ID_CHUNK)
  return origin .. ':' .. string.format('%.0f', chunk), tonumber(seq) - chunk * ID_CHUNK
end

-- The bitmap this partition's next id lands in: never dropped, it would only come back.
local function next_id_chunk(base)
  local partition = string.match(base, '{p(%d+)[}.]')
  local seq = tonumber(redis.call('GET', base .. 'seq') or '0')
  return partition .. ':' .. string.format('%.0f', math.floor((seq + 1) / ID_CHUNK))
end

-- Runs BITFIELD `ops` (SET type offset value, ...) on the bitmap `chunk`, in slices; a bitmap that gets
-- live ids (`bit` 1) is named in `P:{pN}:ic`.
local function write_bitfield(base, chunk, ops, bit)
  if bit == 1 then
    redis.call('SADD', base .. 'ic', chunk)
  end
  for first = 1, #ops, 2000 do
    redis.call('BITFIELD', base .. 'i:' .. chunk, unpack(ops, first, math.min(first + 1999, #ops)))
  end
end

-- Sets the bits of `ids` to `bit` (1: live, 0: gone) with one BITFIELD per bitmap (per 500 ids). Clearing
-- drops a bitmap it leaves empty (one it had to create, for ids not live, too), so it costs a BITCOUNT
-- rather than an EXISTS before: two commands per bitmap on the fire path.
local function write_id_bits(base, ids, bit)
  local ops, chunks = {}, {}
  for _, id in ipairs(ids) do
    local chunk, offset = id_bit(id)
    if chunk then
      local list = ops[chunk]
      if not list then
        list = {}
        ops[chunk] = list
        chunks[#chunks + 1] = chunk
      end
      local n = #list
      list[n + 1], list[n + 2], list[n + 3], list[n + 4] = 'SET', 'u1', offset, bit
    end
  end
  for _, chunk in ipairs(chunks) do
    local name, list = base .. 'i:' .. chunk, ops[chunk]
    write_bitfield(base, chunk, list, bit)
    if bit == 0 and redis.call('BITCOUNT', name) == 0 and chunk ~= next_id_chunk(base) then
      redis.call('DEL', name)
      redis.call('SREM', base .. 'ic', chunk)
    end
  end
end

local function add_live_ids(base, ids)
  write_id_bits(base, ids, 1)
end

-- Marks live the consecutive ids `first`..`last` (seqs) this partition has just given out (schedule):
-- bits that are all new, so each run of them is set 32 at a time (one SET u32 of all ones), not bit by
-- bit — no id parsed, one BITFIELD per bitmap.
local function add_new_live_seqs(base, first, last)
  local partition = string.match(base, '{p(%d+)[}.]')
  local seq = first
  while seq <= last do
    local chunk = math.floor(seq / ID_CHUNK)
    local offset, ops = seq - chunk * ID_CHUNK, {}
    local stop = math.min(last, (chunk + 1) * ID_CHUNK - 1) - chunk * ID_CHUNK -- the chunk's last offset
    while offset <= stop do
      local width = math.min(32, stop - offset + 1)
      local n = #ops
      ops[n + 1], ops[n + 2], ops[n + 3], ops[n + 4] = 'SET', 'u' .. width, offset, 2 ^ width - 1
      offset = offset + width
    end
    write_bitfield(base, partition .. ':' .. string.format('%.0f', chunk), ops, 1)
    seq = (chunk + 1) * ID_CHUNK
  end
end

local function remove_live_ids(base, ids)
  write_id_bits(base, ids, 0)
end
