-- Repartition, step 2 of 3, on the partition a key arrives in (docs/design.md "Repartition"): writes the
-- rows and tombstones step 1 took, at the same id and version, into this partition's indexes as their
-- status wants — pending: `due` at its effective due (`tg` or `d`: armed ones are armed again here,
-- their old fire job is stale, its row gone from there); paused: none; finished (kept): `keys` only. Each
-- id arrives once: `moved` (a hash, id → 1, kept a day after the repartition) remembers it, so a late
-- repeat of this step never brings back a row cancelled or finished since. A key that has a row here
-- already keeps it (that cannot happen while writers move a key before writing it; it is not overwritten).
-- Input:
--   KEYS[1] base of the arriving partition 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] one JSON array of [key, row fields {}, tombstone fields {}, tombstone
--   ms left] per key
-- Output: the number of rows and tombstones written

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"

local base = KEYS[1]
local written = 0

local function first_time(marker)
  return redis.call('HSETNX', base .. 'moved', marker, '1') == 1
end

for _, item in ipairs(cjson.decode(ARGV[2])) do
  local key, fields, tombstone, tombstone_ms = item[1], item[2], item[3], tonumber(item[4])
  local here = redis.call('EXISTS', row_key(base, key)) == 1
  if fields.id and not here and first_time(fields.id) then
    local row = { key = key }
    for field, value in pairs(fields) do
      row[field] = value
    end
    save_row(base, row)
    redis.call('ZADD', base .. 'keys', 0, key)
    if is_live(row.s) then
      redis.call('HSET', base .. 'ids', row.id, key)
    end
    if row.s == 'pending' then
      arm_due(base, key, tonumber(row.tg or row.d))
    end
    here = true
    written = written + 1
  end
  if tombstone.id and not here and tombstone_ms > 0 and first_time('x' .. tombstone.id) then
    local name = tombstone_key(base, key)
    if redis.call('EXISTS', name) == 0 then
      local pairs_ = {}
      for field, value in pairs(tombstone) do
        pairs_[#pairs_ + 1] = field
        pairs_[#pairs_ + 1] = value
      end
      redis.call('HSET', name, unpack(pairs_))
      redis.call('PEXPIRE', name, tombstone_ms)
      written = written + 1
    end
  end
end
return written
