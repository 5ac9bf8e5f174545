-- Cancels one bounded batch of a scope through the lex index (O(batch), never a keyspace scan):
-- ARGV[2] tombstone ms, ARGV[3] scope ('' = every key), ARGV[4] batch size, ARGV[5] event reason.
-- Replies { cancelled, more (0/1), now }; the client loops while `more`.
local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms, scope, batch, reason = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local index = base .. 'keys'
local min, max = '-', '+'
if scope ~= '' then
  -- Keys only use [A-Za-z0-9:_\-./@], so byte 255 sorts after every key that starts with the scope.
  min, max = '[' .. scope, '(' .. scope .. '\255'
end

local now = now_ms()
local cancelled = 0
local keys = redis.call('ZRANGEBYLEX', index, min, max, 'LIMIT', 0, batch)
for _, key in ipairs(keys) do
  local row = read_row(base, key)
  if row and is_live(row.s) then
    cancel_row(base, prefix, row, reason, now, tombstone_ms)
    cancelled = cancelled + 1
  else
    drop_finished(base, key)
  end
end

local more = 0
if #keys == batch and #redis.call('ZRANGEBYLEX', index, min, max, 'LIMIT', 0, 1) > 0 then
  more = 1
end
return { cancelled, more, int(now) }
