-- Include: The partition indexes `due`, `armed`, `keys`, `leases`, the live ids, and the wake channel.
--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/ledger"
--- @include "includes/live-ids"

-- Runs `command [target] ...items` in slices: one call per slice instead of one per item, and never
-- more arguments than Lua's unpack takes (about 8000). The slice is even, so score/member pairs stay
-- together. `target` nil: the items are the command's only arguments (DEL of many keys). Returns the
-- sum of the replies (what ZREM, ZADD, HDEL, DEL count).
local function call_in_slices(command, target, items)
  local slice, total = 2000, 0
  for first = 1, #items, slice do
    local last = math.min(first + slice - 1, #items)
    if target then
      total = total + redis.call(command, target, unpack(items, first, last))
    else
      total = total + redis.call(command, unpack(items, first, last))
    end
  end
  return total
end

-- Arming intent: the key waits in `due` (never in `armed` at the same time) until the dispatcher takes
-- it; a score below everything `due` held wakes the dispatchers on `P:{pN}:wake` (docs/design.md).
-- `text`: the score as the caller holds it as text (an integer's digits), else the number is sent;
-- `unarmed`: the caller read that `armed` does not hold the key (ledger_fold_armed), so no ZREM of it.
-- (Command arguments as text: redis.call prints a number with the float printer, ~2.7k instructions.)
local function arm_due(base, key, score, text, unarmed)
  local due_key = base .. 'due'
  local first = redis.call('ZRANGE', due_key, '0', '0', 'WITHSCORES')
  if not unarmed then
    redis.call('ZREM', base .. 'armed', key)
  end
  redis.call('ZADD', due_key, text or score, key)
  if #first == 0 or score < tonumber(first[2]) then
    redis.call('PUBLISH', base .. 'wake', int(score))
  end
end

-- The keys of the partition's kept finished rows (removeOnComplete=false, or kept for their free runs),
-- the set `P:{pN}:kr`: added by every write that leaves one (complete.lua, pass-late.lua,
-- repartition-put.lua), removed by every one that takes one away, so it goes with the last. While it
-- exists cancel-all.lua's mark reads each row's status for its count; a member left behind would only
-- cost that read, a kept row missing from it a wrong count.
local function note_kept(base, key)
  redis.call('SADD', base .. 'kr', key)
end

-- A finished row kept by removeOnComplete=false: cancel/cancelAll just drop it (not counted, no event).
local function drop_finished(base, key)
  redis.call('DEL', row_key(base, key))
  redis.call('SREM', base .. 'kr', key)
  redis.call('ZREM', base .. 'keys', key)
  ledger_expire(key, LEDGER_KEEP_MS)
end
