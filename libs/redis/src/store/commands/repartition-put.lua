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
--   ms left, ledger entries [] (newest first), ledger ms left (-1: as long as its row)] per key. A ledger
--   is written where the key has none yet (a late repeat finds the one it wrote, or a newer one, and
--   leaves it).
-- Output: the number of rows and tombstones written (ledgers are not counted)

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"

local base = KEYS[1]
local written = 0
-- index entries of the rows written, added at once (one command per index, not per row)
local keys, ids, due = {}, {}, {}
local earliest

local function first_time(marker)
  return redis.call('HSETNX', base .. 'moved', marker, '1') == 1
end

local function hset(name, fields)
  local pairs_ = {}
  for field, value in pairs(fields) do
    pairs_[#pairs_ + 1] = field
    pairs_[#pairs_ + 1] = value
  end
  redis.call('HSET', name, unpack(pairs_))
end

for _, item in ipairs(cjson.decode(ARGV[2])) do
  local key, row, tombstone, tombstone_ms = item[1], item[2], item[3], tonumber(item[4])
  local status = row.s or ROW_DEFAULTS.s
  local ledger, ledger_ms, ledger_name = item[5] or {}, tonumber(item[6] or -1), base .. 'h:' .. key
  if #ledger > 0 and redis.call('EXISTS', ledger_name) == 0 then
    for start = 1, #ledger, 1000 do
      redis.call('RPUSH', ledger_name, unpack(ledger, start, math.min(start + 999, #ledger)))
    end
    if ledger_ms > 0 then
      redis.call('PEXPIRE', ledger_name, ledger_ms)
    end
  end
  local here = redis.call('EXISTS', row_key(base, key)) == 1
  if row.id and not here and first_time(row.id) then
    hset(row_key(base, key), row)
    keys[#keys + 1] = 0
    keys[#keys + 1] = key
    if is_live(status) then
      ids[#ids + 1] = row.id
    else
      note_kept(base, key) -- a kept finished row here (cancel-all.lua's count)
    end
    if status == 'pending' then
      local score = tonumber(row.tg or row.d)
      due[#due + 1] = score
      due[#due + 1] = key
      earliest = math.min(earliest or score, score)
    end
    here = true
    written = written + 1
  end
  if tombstone.id and not here and tombstone_ms > 0 and first_time('x' .. tombstone.id) then
    local name = tombstone_key(base, key)
    if redis.call('EXISTS', name) == 0 then
      hset(name, tombstone)
      redis.call('PEXPIRE', name, tombstone_ms)
      written = written + 1
    end
  end
end
if earliest then
  -- as arm_due: wake the dispatchers when this comes before everything `due` held
  local first = redis.call('ZRANGE', base .. 'due', 0, 0, 'WITHSCORES')
  if #first == 0 or earliest < tonumber(first[2]) then
    redis.call('PUBLISH', base .. 'wake', int(earliest))
  end
end
call_in_slices('ZADD', base .. 'keys', keys)
add_live_ids(base, ids)
call_in_slices('ZADD', base .. 'due', due)
return written
