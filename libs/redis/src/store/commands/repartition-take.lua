-- Repartition, step 1 of 3, on the partition a key leaves (docs/design.md "Repartition"): takes each
-- key's row, tombstone and ledger out of sight — RENAME `t:<key>` → `m:<key>`, `x:<key>` → `mx:<key>` and
-- `h:<key>` → `mh:<key>` (the moving records; a tombstone and a ledger keep their TTL, a closed ledger
-- `hd:<key>` goes under the moving list: includes/ledger ledger_fold_closed; the row's fields
-- move as they are, run and slot policies included) and out of every index — unless the row is busy: running,
-- or with a free run in progress (`free` holds `<key>|<version>`): a run's claim, lease and completion
-- stay where they are, so the key moves once the run is over. Repeated (a mover that died between the
-- steps, or two movers), it answers the moving records it already made.
-- Input:
--   KEYS[1] base of the partition the keys leave 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2..] keys
-- Output: per key { 'busy' } | { 'none' } | { 'move', row (HGETALL-style array, or {}), tombstone
--   (array or {}), tombstone ms left (-1 none), ledger (its entries, newest first, or {}), ledger ms
--   left (-1: as long as its row) }

--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/cancel-record"
--- @include "includes/scope-records"

local base = KEYS[1]
local replies = {}
local leaving, leaving_ids, leaving_kept = {}, {}, {}

local function busy(key, row)
  if row.s == 'running' then
    return true
  end
  local cursor = '0'
  repeat
    local page = redis.call('HSCAN', base .. 'free', cursor, 'MATCH', key .. '|*', 'COUNT', 1000)
    if #page[2] > 0 then
      return true
    end
    cursor = page[1]
  until cursor == '0'
  return false
end

-- Keys a cancelAll's scope record covers leave as the tombstones they are (includes/scope-records).
settle_scopes(base, ARGV[1], { unpack(ARGV, 2) })
for i = 2, #ARGV do
  local key = ARGV[i]
  local moving, moving_x = base .. 'm:' .. key, base .. 'mx:' .. key
  local row = read_row(base, key)
  if row and busy(key, row) then
    replies[#replies + 1] = { 'busy' }
  else
    local fields
    if row then
      leaving[#leaving + 1] = key
      leaving_ids[#leaving_ids + 1] = row.id
      if not is_live(row.s) then
        leaving_kept[#leaving_kept + 1] = key -- noted again where it lands (repartition-put.lua)
      end
      redis.call('RENAME', row_key(base, key), moving)
      -- (moves with the row: includes/ledger) kept in the moving record too, which `history` reads and a
      -- repeat answers: the key is out of `armed` from here
      if ledger_fold_armed(row) then
        redis.call('HSET', moving, 'lq', row.lq)
      end
      row.key = nil
      fields = flat(row)
    else
      fields = redis.call('HGETALL', moving)
    end
    local tombstone, tombstone_ms = {}, -1
    if redis.call('EXISTS', tombstone_key(base, key)) == 1 then
      -- a cancel-all's record stays here: the entries it stands for go into the ledger that moves
      ledger_settle(key)
      redis.call('RENAME', tombstone_key(base, key), moving_x)
    end
    if row == nil or redis.call('EXISTS', moving_x) == 1 then
      tombstone = redis.call('HGETALL', moving_x)
      tombstone_ms = redis.call('PTTL', moving_x)
    end
    -- the ledger (includes/ledger) goes with its key; one a removed row left goes too
    local moving_h = base .. 'mh:' .. key
    if redis.call('EXISTS', base .. 'h:' .. key) == 1 then
      redis.call('RENAME', base .. 'h:' .. key, moving_h)
    end
    ledger_fold_closed(key, moving_h)
    local ledger, ledger_ms = redis.call('LRANGE', moving_h, 0, -1), redis.call('PTTL', moving_h)
    if #fields == 0 and #tombstone == 0 and #ledger == 0 then
      replies[#replies + 1] = { 'none' }
    else
      replies[#replies + 1] = { 'move', fields, tombstone, tombstone_ms, ledger, ledger_ms }
    end
  end
end
-- out of every index at once (one command per index, not per key)
call_in_slices('ZREM', base .. 'due', leaving)
call_in_slices('ZREM', base .. 'armed', leaving)
call_in_slices('ZREM', base .. 'keys', leaving)
call_in_slices('SREM', base .. 'kr', leaving_kept)
remove_live_ids(base, leaving_ids)
return replies
