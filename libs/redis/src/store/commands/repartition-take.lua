-- Repartition, step 1 of 3, on the partition a key leaves (docs/design.md "Repartition"): takes each
-- key's row and tombstone out of sight — RENAME `t:<key>` → `m:<key>` and `x:<key>` → `mx:<key>` (the
-- moving records; a tombstone keeps its TTL) and out of every index — unless the row is busy: running,
-- or with a free run in progress (`free` holds `<key>|<version>`): a run's claim, lease and completion
-- stay where they are, so the key moves once the run is over. Repeated (a mover that died between the
-- steps, or two movers), it answers the moving records it already made.
-- Input:
--   KEYS[1] base of the partition the keys leave 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2..] keys
-- Output: per key { 'busy' } | { 'none' } | { 'move', row (HGETALL-style array, or {}), tombstone
--   (array or {}), tombstone ms left (-1 none) }

--- @include "includes/row"

local base = KEYS[1]
local replies = {}

local function busy(key, row)
  if row.s == 'running' then
    return true
  end
  local free = redis.call('HSCAN', base .. 'free', 0, 'MATCH', key .. '|*', 'COUNT', 1000)
  return #free[2] > 0
end

for i = 2, #ARGV do
  local key = ARGV[i]
  local moving, moving_x = base .. 'm:' .. key, base .. 'mx:' .. key
  local row = read_row(base, key)
  if row and busy(key, row) then
    replies[#replies + 1] = { 'busy' }
  else
    if row then
      redis.call('ZREM', base .. 'due', key)
      redis.call('ZREM', base .. 'armed', key)
      redis.call('ZREM', base .. 'keys', key)
      if row.id then
        redis.call('HDEL', base .. 'ids', row.id)
      end
      redis.call('RENAME', row_key(base, key), moving)
    end
    if redis.call('EXISTS', tombstone_key(base, key)) == 1 then
      redis.call('RENAME', tombstone_key(base, key), moving_x)
    end
    local fields = redis.call('HGETALL', moving)
    local tombstone = redis.call('HGETALL', moving_x)
    if #fields == 0 and #tombstone == 0 then
      replies[#replies + 1] = { 'none' }
    else
      replies[#replies + 1] = { 'move', fields, tombstone, redis.call('PTTL', moving_x) }
    end
  end
end
return replies
