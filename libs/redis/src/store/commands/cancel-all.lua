-- Cancels one bounded batch of a scope through the lex index (O(batch), never a keyspace scan). Calls
-- may overlap (pipelined): each takes the first keys still in the index.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] tombstone ms, ARGV[3] scope ('' = every key), ARGV[4] batch size,
--   ARGV[5] event reason
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers as the
--   first did
-- Output: { cancelled, more (0/1), now }; the client loops while `more`.

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/retire"
--- @include "includes/requests"

local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms, scope, batch, reason = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local index = base .. 'keys'
local min, max = '-', '+'
if scope ~= '' then
  -- Keys only use [A-Za-z0-9:_\-./@], so byte 255 sorts after every key that starts with the scope.
  min, max = '[' .. scope, '(' .. scope .. '\255'
end

local now = now_ms()
local cancelled_ids = {}
local keys = redis.call('ZRANGEBYLEX', index, min, max, 'LIMIT', 0, batch)
for _, key in ipairs(keys) do
  local f = redis.call('HMGET', row_key(base, key), 'id', 'v', 's', 'k', 'aw', 'rv')
  local row = with_defaults({ key = key, id = f[1] or nil, v = f[2] or nil, s = f[3] or nil, k = f[4] or nil })
  if f[1] and is_live(row.s) then
    row.aw, row.rv = f[5] or nil, f[6] or nil
    retire_row(base, prefix, row, reason, now, tombstone_ms)
    cancelled_ids[#cancelled_ids + 1] = row.id
  else
    redis.call('DEL', row_key(base, key)) -- a finished row kept by removeOnComplete=false: not counted
  end
end
-- Every key of the batch leaves every index at once (one command per index, not per key).
for _, name in ipairs({ 'due', 'armed', 'leases', 'keys' }) do
  call_in_slices('ZREM', base .. name, keys)
end
remove_live_ids(base, cancelled_ids)

local more = 0
if #keys == batch and #redis.call('ZRANGEBYLEX', index, min, max, 'LIMIT', 0, 1) > 0 then
  more = 1
end
return { #cancelled_ids, more, int(now) }
