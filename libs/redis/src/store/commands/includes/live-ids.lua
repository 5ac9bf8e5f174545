-- Include: The live ids of a partition (docs/design.md "Live ids"), what `check(id)` and `snapshot()` read:
-- one bit per id, not a hash entry (id → key cost ~80 bytes per pending timer). Ids are `<seq>p<M>` with a
-- dense counter per partition M, so id `<seq>p<M>` is bit `seq mod ID_CHUNK` of the bitmap
-- `P:{pN}:i:<M>:<seq div ID_CHUNK>` of the partition N holding its row (N = M unless a repartition moved
-- the row: it keeps its id). The set `P:{pN}:ic` names those bitmaps (`<M>:<chunk>`) for snapshot(). A
-- bitmap that empties goes, unless new ids of this partition still land in it (store/live-ids.ts ID_CHUNK).
-- Uses no other include.
local ID_CHUNK = 65536
-- What live_ids_among read this call: bitmaps by name ('' for none), so the call's clearing of one takes
-- its bytes from there, not a GET of its own (every write of a bitmap here forgets it), and each id's
-- seq and origin, so the grouping by bitmap does not parse it again.
--- @per-call: this call's reads
local read_bitmaps, parsed_seqs, parsed_origins = {}, {}, {}

-- The bitmap this partition's next id lands in: never dropped, it would only come back.
local function next_id_chunk(base)
  local partition = string.match(base, '{p(%d+)[}.]')
  local seq = tonumber(redis.call('GET', base .. 'seq') or '0')
  return partition .. ':' .. string.format('%.0f', math.floor((seq + 1) / ID_CHUNK))
end

-- Runs BITFIELD `ops` (SET type offset value, ..., then at most one GET) on the bitmap `chunk`, in
-- slices; a bitmap that gets live ids (`bit` 1) is named in `P:{pN}:ic`. Returns the last slice's reply.
local function write_bitfield(base, chunk, ops, bit)
  read_bitmaps[base .. 'i:' .. chunk] = nil
  if bit == 1 then
    redis.call('SADD', base .. 'ic', chunk)
  end
  local reply
  for first = 1, #ops, 2000 do
    reply = redis.call('BITFIELD', base .. 'i:' .. chunk, unpack(ops, first, math.min(first + 1999, #ops)))
  end
  return reply
end

-- The ids of ours among `ids` (`<seq>p<M>`; other strings are skipped) grouped by bitmap: a list of
-- { chunk = '<M>:<chunk>', offsets = { number } } in order of first appearance. The suffix is formatted
-- once per bitmap, with `%d`: a number left for redis.call to convert, or `%.0f`, goes through the float
-- printer, ~0.4 µs per value.
local function ids_by_bitmap(ids)
  local groups, by_origin = {}, {}
  local group, group_origin, group_chunk -- the last id's, for its neighbours: usually the same bitmap
  for i = 1, #ids do
    local seq, origin = parsed_seqs[ids[i]], parsed_origins[ids[i]]
    if not seq then
      seq, origin = string.match(ids[i], '^(%d+)p(%d+)$')
      seq = seq and seq + 0 -- (digits: coerced once, where tonumber parses twice)
    end
    if seq then
      local offset = seq % ID_CHUNK
      local chunk = (seq - offset) / ID_CHUNK
      if origin ~= group_origin or chunk ~= group_chunk then
        local of_origin = by_origin[origin]
        if not of_origin then
          of_origin = {}
          by_origin[origin] = of_origin
        end
        group, group_origin, group_chunk = of_origin[chunk], origin, chunk
        if not group then
          group = { chunk = origin .. ':' .. string.format('%d', chunk), offsets = {}, n = 0 }
          of_origin[chunk] = group
          groups[#groups + 1] = group
        end
      end
      local n = group.n + 1
      group.n, group.offsets[n] = n, offset
    end
  end
  return groups
end

-- Sets bits `offsets` (n of them) of the bitmap `chunk` to `bit` with one BITFIELD (per 500 ids). Clearing
-- (`bit` 0), the same BITFIELD then reads the 32 bits from the byte of the highest cleared one (its ops
-- run in order): returns true when one of them is set, so the bitmap is not empty (and is not counted).
local function write_bits(base, chunk, offsets, n, bit)
  -- the offset and value as text: redis.call formats a number argument with `%.17g`, the float printer
  local ops, value, high = {}, tostring(bit), offsets[1]
  for i = 1, n do
    local at, offset = 4 * i, offsets[i]
    ops[at - 3], ops[at - 2], ops[at - 1], ops[at] = 'SET', 'u1', string.format('%d', offset), value
    if offset > high then
      high = offset
    end
  end
  if bit == 0 then
    ops[4 * n + 1], ops[4 * n + 2], ops[4 * n + 3] = 'GET', 'u32', string.format('%d', high - high % 8)
  end
  local reply = write_bitfield(base, chunk, ops, bit)
  return bit == 0 and reply[#reply] ~= 0
end

-- The bit masks of a byte, high bit first (Redis numbers a bitmap's bits from each byte's high bit).
local BIT_MASKS = { 128, 64, 32, 16, 8, 4, 2, 1 }
-- Bytes read per string.byte / written per string.char: under Lua's stack limit for their values.
local BYTE_PART = 4096

-- Clears bits `offsets` (n of them) of the bitmap `name` with one read-modify-write of bytes `low` to
-- `high` (0-based), which hold them all: no BITFIELD arguments per id. GET and SET of the whole bitmap
-- (at most 8 KB; GETRANGE and SETRANGE are not among the commands the documented ACL user may call),
-- only the span's bytes taken apart and put together. Bits past the string are clear already. Returns
-- true when a bit is seen set after it (in a byte it cleared in, or the byte on either side of the
-- span), so the bitmap is not empty (and is not counted); false when none was seen.
local function clear_bits_in_place(name, offsets, n, low, high)
  local bitmap = read_bitmaps[name] or redis.call('GET', name)
  read_bitmaps[name] = nil
  if not bitmap or #bitmap <= low then
    return false
  end
  high = math.min(high, #bitmap - 1)
  local parts = {}
  for first = low + 1, high + 1, BYTE_PART do
    parts[#parts + 1] = { string.byte(bitmap, first, math.min(first + BYTE_PART - 1, high + 1)) }
  end
  for i = 1, n do
    local offset = offsets[i]
    local bit = offset % 8
    local index = (offset - bit) / 8 - low -- the byte's index in the span, from 0
    if index <= high - low then
      local at = index % BYTE_PART
      local part, mask = parts[(index - at) / BYTE_PART + 1], BIT_MASKS[bit + 1]
      local byte = part[at + 1]
      if byte % (mask + mask) >= mask then
        part[at + 1] = byte - mask
      end
    end
  end
  -- (the bytes it cleared in, read after all of them: two ids may share one)
  local live = (string.byte(bitmap, high + 2) or 0) > 0 or (low > 0 and string.byte(bitmap, low) > 0)
  for i = 1, n do
    if live then
      break
    end
    local index = (offsets[i] - offsets[i] % 8) / 8 - low
    if index <= high - low then
      local at = index % BYTE_PART
      live = parts[(index - at) / BYTE_PART + 1][at + 1] > 0
    end
  end
  for i = 1, #parts do
    parts[i] = string.char(unpack(parts[i]))
  end
  redis.call('SET', name, string.sub(bitmap, 1, low) .. table.concat(parts) .. string.sub(bitmap, high + 2))
  return live
end

-- Clears bits `offsets` (n of them) of the bitmap `chunk`: in place when they are a few and the bytes
-- they span few enough per id (a byte taken apart and put together costs ~60 Redis instructions, the
-- bitmap's GET and SET about two BITFIELD ops, a BITFIELD op with its four arguments and reply ~10k),
-- else by BITFIELD. Returns true when it saw a bit of the bitmap still set after it.
local function clear_bits(base, chunk, offsets, n)
  local low, high = offsets[1], offsets[1]
  for i = 2, n do
    local offset = offsets[i]
    if offset < low then
      low = offset
    elseif offset > high then
      high = offset
    end
  end
  low, high = (low - low % 8) / 8, (high - high % 8) / 8
  if n >= 4 and high - low < 128 * n then
    return clear_bits_in_place(base .. 'i:' .. chunk, offsets, n, low, high)
  end
  return write_bits(base, chunk, offsets, n, 0)
end

-- Sets the bits of `ids` to `bit` (1: live, 0: gone), per bitmap. Clearing drops a bitmap it leaves empty
-- (one it had to create, for ids not live, too): a BITCOUNT after it, unless the clearing saw a bit still
-- set near the ones it cleared (the ids given out next to them: usually timers still pending); rather than
-- an EXISTS before, which every call would pay.
local function write_id_bits(base, ids, bit)
  for _, group in ipairs(ids_by_bitmap(ids)) do
    local chunk, name = group.chunk, base .. 'i:' .. group.chunk
    local live = false
    if bit == 1 then
      write_bits(base, chunk, group.offsets, group.n, 1)
    else
      live = clear_bits(base, chunk, group.offsets, group.n)
    end
    if bit == 0 and not live and redis.call('BITCOUNT', name) == 0 and chunk ~= next_id_chunk(base) then
      redis.call('DEL', name)
      read_bitmaps[name] = nil
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

-- Which of `ids` are live: a set (id → true). One GET of each bitmap they name (at most 8 KB; a bit taken
-- from its byte costs ~60 Redis instructions, a BITFIELD GET op with its arguments ~10k), kept for the
-- call's clearing of the same ids (read_bitmaps, parsed_seqs).
local function live_ids_among(base, ids)
  local live, by_origin = {}, {}
  for i = 1, #ids do
    local id = ids[i]
    local seq, origin = string.match(id, '^(%d+)p(%d+)$')
    if seq then
      seq = seq + 0
      parsed_seqs[id], parsed_origins[id] = seq, origin
      local offset = seq % ID_CHUNK
      local chunk = (seq - offset) / ID_CHUNK
      -- (by origin, then chunk: no name made per id)
      local bitmaps = by_origin[origin]
      if not bitmaps then
        bitmaps = {}
        by_origin[origin] = bitmaps
      end
      local bitmap = bitmaps[chunk]
      if not bitmap then
        local name = base .. 'i:' .. origin .. ':' .. string.format('%d', chunk)
        bitmap = redis.call('GET', name) or ''
        bitmaps[chunk], read_bitmaps[name] = bitmap, bitmap
      end
      local bit = offset % 8
      local byte = string.byte(bitmap, (offset - bit) / 8 + 1)
      local mask = BIT_MASKS[bit + 1]
      if byte and byte % (mask + mask) >= mask then
        live[id] = true
      end
    end
  end
  return live
end

local function remove_live_ids(base, ids)
  write_id_bits(base, ids, 0)
end

-- The same for one id (a cancel, a late pass's end): the commands the batch path sends for it, without
-- its grouping, whose tables and functions cost a single cancel ~32k Redis instructions (its BITFIELD ~20k).
local function remove_live_id(base, id)
  local seq, origin = string.match(id, '^(%d+)p(%d+)$')
  if not seq then
    return
  end
  seq = seq + 0
  local offset = seq % ID_CHUNK
  local chunk = origin .. ':' .. string.format('%d', (seq - offset) / ID_CHUNK)
  local name = base .. 'i:' .. chunk
  read_bitmaps[name] = nil
  -- cleared, then the 32 bits from its byte read (as the batch path): one of them set, it is not empty
  local reply = redis.call('BITFIELD', name, 'SET', 'u1', string.format('%d', offset), '0', 'GET', 'u32',
    string.format('%d', offset - offset % 8))
  if reply[2] == 0 and redis.call('BITCOUNT', name) == 0 and chunk ~= next_id_chunk(base) then
    redis.call('DEL', name)
    redis.call('SREM', base .. 'ic', chunk)
  end
end
