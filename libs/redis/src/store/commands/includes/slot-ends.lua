-- Include: A pending or paused row with no slot left to arm ends (docs/spec.md §3.3c): a late slot whose
-- policy picks none (pass-late.lua), a resume whose next slot is after endAt (resume.lua).
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/free-runs"
--- @include "includes/live-ids"

-- Ends the row as its last run did (completed when it never ran), with `reason` on its event and ledger
-- entry; sets `row.s` to that status. The row goes unless removeOnComplete=false keeps it.
local function end_without_slot(base, prefix, row, now, reason)
  local key = row.key
  local hash = row_key(base, key)
  local status = row.l and cjson.decode(row.l).status == 'failed' and 'failed' or 'completed'
  row.s = status
  publish_event(prefix, row, status, now, { reason = reason })
  redis.call('ZREM', base .. 'due', key)
  redis.call('ZREM', base .. 'armed', key)
  remove_live_id(base, row.id)
  -- an awaitTask=false timer with free runs in flight keeps its row until the last ends (`rp`, complete.lua)
  local kept_for_free_runs = row.rm ~= '0' and row.aw == '0' and has_free_runs(base, key, row.id)
  if row.rm == '0' or kept_for_free_runs then
    redis.call('HSET', hash, 's', status)
    note_kept(base, key) -- a kept finished row here (cancel-all.lua's count)
    if kept_for_free_runs then
      redis.call('HSET', hash, 'rp', '1')
    end
  else
    redis.call('DEL', hash)
    redis.call('ZREM', base .. 'keys', key)
    ledger_expire(key, LEDGER_KEEP_MS) -- the ledger outlives its removed row, as complete.lua's finish
  end
end
