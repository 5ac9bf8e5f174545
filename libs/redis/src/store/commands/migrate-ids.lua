-- Converts one page of a partition's `ids` hash (`id → key`, the live ids of the versions before the
-- live-id bitmaps) into bits (docs/design.md "Live ids", docs/operations.md "Upgrading"). An id goes live
-- only when the key's row still holds it and is live; every field of the page is deleted in this call,
-- so a page is converted at once, the hash goes when its last field does, and a run cut off anywhere
-- leaves the rest for the next one. Idempotent, so every process may run it, at once too.
-- A row that gets a bit and was never handed off (version 1, no run, nothing kept) while its ledger
-- exists already holds its 'scheduled' entry there (an old version wrote it when the key was scheduled
-- again, or at a hand-off whose job was lost): it is marked `lo` so its next hand-off does not add it
-- again (includes/ledger `ledger_hand_off`).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] the HSCAN cursor ('0' to start), ARGV[3] fields per page (a hint)
-- Output: { next cursor ('0': the hash was scanned through), ids made live }

--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/live-ids"

local base = KEYS[1]
local ids_key = base .. 'ids'
local page = redis.call('HSCAN', ids_key, ARGV[2], 'COUNT', tonumber(ARGV[3]))
local entries = page[2]
local live, seen = {}, {}
for i = 1, #entries, 2 do
  local id, key = entries[i], entries[i + 1]
  seen[#seen + 1] = id
  local hash = row_key(base, key)
  local row = redis.call('HMGET', hash, 'id', 's', 'v', 'rc', 'lq', 'lo')
  if row[1] == id and is_live(row[2] or ROW_DEFAULTS.s) then
    live[#live + 1] = id
    local first_hand_off = (row[3] or ROW_DEFAULTS.v) == '1' and not (row[4] or row[5] or row[6])
    if first_hand_off and redis.call('EXISTS', base .. 'h:' .. key) == 1 then
      redis.call('HSET', hash, 'lo', '1')
    end
  end
end
add_live_ids(base, live)
call_in_slices('HDEL', ids_key, seen)
return { page[1], #live }
