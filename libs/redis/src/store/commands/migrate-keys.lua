-- Converts one page of a partition's `keys` zset (every key with a row, score 0: the index of the
-- versions before the chunked key index) into the key index (includes/key-index; docs/operations.md
-- "Upgrading"), and marks the partition's layout fence so that the store writes of those versions are
-- refused from now on: they would write `keys` again, and their cancelAll and list read only `keys`.
-- A page is added to the key index before it leaves `keys`, so a run cut off anywhere leaves the rest
-- for the next one and loses nothing. Idempotent, so every process may run it, at once too.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] this process's fence value (includes/layout-fence: the partition count
--   and 'k'), ARGV[3] keys per page
-- Output: the keys left in `keys` (0: converted)

--- @include "includes/key-index"

local base, fence, page = KEYS[1], ARGV[2], tonumber(ARGV[3])
-- The count alone is what the versions before wrote (or none, never repartitioned): the same count
-- gets this version's mark; another count stays (a repartition decided which writes it takes).
local layout = redis.call('GET', base .. 'layout')
if not layout or layout .. 'k' == fence then
  redis.call('SET', base .. 'layout', fence)
end
local old = base .. 'keys'
local keys = redis.call('ZRANGE', old, 0, page - 1)
if #keys > 0 then
  key_index_add(base, keys)
  redis.call('ZREM', old, unpack(keys))
end
return redis.call('ZCARD', old)
