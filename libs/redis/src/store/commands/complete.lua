-- Records the outcome of runs and moves their timers on (docs/design.md "Complete", docs/spec.md §3.2, §3.3).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P' (with a request: includes/requests; a repeated batch answers as the first)
--   ARGV[2] the runs as one JSON array (one argument, not ten per run: far cheaper to send), each
--     [id, key, version, runCount, mode (held | free), outcome (ok | failed | lost), error message, error
--     reason, the next cron occurrence ('' unless cron), cron slots missed before the run started, cron
--     slots that came while it went on] — strings but the last two; a free run's key names its lease
--     record (includes/free-runs) with its version
-- Output: one reply per run: { 'done', missed, overlap } with the slots the timer went past (a cron's as
--   given, an interval's counted here: grid_skips), or { 'stale', reason } when the entry changed under
--   the run (then nothing is written).

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/free-runs"
--- @include "includes/requests"

local base, prefix = KEYS[1], ARGV[1]
local now = now_ms()
-- Index entries of the settled runs, removed once for the whole batch at the end (nothing here reads
-- them back): every held run leaves `leases`; a removed timer leaves `ids` and `keys`.
local unleased, removed_ids, removed_keys = {}, {}, {}

-- A lost settlement that finds nothing to settle (another reconciler was first) is not an event.
local function stale(row, id, key, version, reason, outcome)
  if outcome == 'lost' then
    return { 'stale', reason }
  end
  local subject = row or { id = id, key = key }
  publish_event(prefix, subject, 'stale', now, { version = tonumber(version), kind = row and row.k or cjson.null, reason = reason })
  return { 'stale', reason }
end

-- What `last` records (docs/spec.md §3.2): the run's start and end, and the error of a failed or lost run.
local function last_run(row, outcome, message, reason)
  local last = { started = tonumber(row.lf), ended = now, status = outcome == 'ok' and 'ok' or 'failed' }
  if outcome ~= 'ok' then
    last.error = { message = message, reason = reason ~= '' and reason or nil }
  end
  return last
end

-- The outcome's event, and the fields it writes when the row stays (`l` and `lc` or `le`). `ended`: why
-- the run ended its timer unasked ('no-next-slot'), carried by the event as its reason.
local function outcome_of(row, version, outcome, message, reason, ended)
  local last = last_run(row, outcome, message, reason)
  publish_event(prefix, row, outcome == 'ok' and 'completed' or 'failed', now, { version = tonumber(version), error = last.error, reason = ended })
  local fields = { l = cjson.encode(last) }
  fields[outcome == 'ok' and 'lc' or 'le'] = int(now)
  return fields
end

-- A free run (awaitTask=false tick) only records its outcome: `last` while no newer run began.
local function complete_free(row, version, run_count, outcome, message, reason)
  local fields = outcome_of(row, version, outcome, message, reason)
  if row.rc ~= run_count then
    fields.l = nil
  end
  redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
end

-- The run is over for good: the timer ends with `status`, kept by removeOnComplete=false, else removed
-- (then nothing it would have recorded is encoded: only the event carries the outcome). An awaitTask=false
-- timer with free runs in flight is kept until the last ends (`rp`, includes/free-runs).
local function finish(row, version, outcome, message, reason, ended)
  removed_ids[#removed_ids + 1] = row.id
  local kept_for_free_runs = row.rm ~= '0' and row.aw == '0' and has_free_runs(base, row.key, row.id)
  if row.rm == '0' or kept_for_free_runs then
    local fields = outcome_of(row, version, outcome, message, reason, ended)
    fields.s = outcome == 'ok' and 'completed' or 'failed'
    fields.rp = kept_for_free_runs and '1' or nil
    redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
    redis.call('HDEL', row_key(base, row.key), 'lw', 'lu', 'ct', 'hc')
  else
    local last_error = outcome ~= 'ok' and last_run(row, outcome, message, reason).error or nil
    publish_event(prefix, row, outcome == 'ok' and 'completed' or 'failed', now, { version = tonumber(version), error = last_error, reason = ended })
    redis.call('DEL', row_key(base, row.key))
    removed_keys[#removed_keys + 1] = row.key
  end
end

-- The timer goes on: next version, pending again, its next due armed; the run's lease fields go.
local function rearm(row, fields, due, gone)
  fields.v = int(tonumber(row.v) + 1)
  fields.s = 'pending'
  fields.d = int(due)
  redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
  redis.call('HDEL', row_key(base, row.key), unpack(gone))
  arm_due(base, row.key, due)
end

-- Settles a held run; returns the slots its timer went past: missed, overlap (docs/spec.md §3.3).
local function complete_held(row, version, outcome, message, reason, cron_next, missed, overlap)
  unleased[#unleased + 1] = row.key
  local final = row.mr and tonumber(row.rc or '0') >= tonumber(row.mr)
  if row.tg and not final then
    -- A trigger run does not move the schedule: back to the unchanged `d`.
    rearm(row, outcome_of(row, version, outcome, message, reason), tonumber(row.d), { 'lw', 'lu', 'ct', 'hc', 'tg' })
    return 0, 0
  elseif row.k == 'once' or final or (row.k == 'interval' and outcome == 'failed') then
    finish(row, version, outcome, message, reason)
    return 0, 0
  elseif row.k == 'interval' then
    local due, next_due = tonumber(row.d), next_grid_slot(row, now)
    missed, overlap = grid_skips(row, due, tonumber(row.lf), next_due)
    rearm(row, outcome_of(row, version, outcome, message, reason), next_due, { 'lw', 'lu', 'ct', 'hc' })
  elseif cron_next == '' then
    -- No slot comes after this run (nextCronSlot found none): the timer ends, and says why.
    finish(row, version, outcome, message, reason, 'no-next-slot')
  else
    rearm(row, outcome_of(row, version, outcome, message, reason), tonumber(cron_next), { 'lw', 'lu', 'ct', 'hc' })
  end
  publish_skips(prefix, row, now, version, missed, overlap)
  return missed, overlap
end

-- A free run settles against its own lease record (includes/free-runs): still this run's (not claimed
-- again elsewhere after its lease expired), and a lost one really expired. Record and lease go either way.
local function settle_free(row, id, key, version, run_count, outcome, message, reason)
  local member = free_member(key, version)
  local run = read_free_run(base, member)
  local lease = tonumber(redis.call('ZSCORE', base .. 'leases', member) or '0')
  if not run or run.rc ~= run_count or (outcome == 'lost' and lease > now) then
    return stale(row, id, key, version, 'status', outcome)
  end
  drop_free_run(base, member)
  if not row or row.id ~= id then
    return stale(nil, id, key, version, 'gone', outcome)
  end
  complete_free(row, version, run_count, outcome, message, reason)
  -- A row kept only for its free runs in flight (removeOnComplete) goes with the last of them.
  if row.rp == '1' and not has_free_runs(base, key, id) then
    redis.call('DEL', row_key(base, key))
    removed_keys[#removed_keys + 1] = key
  end
  return { 'done', 0, 0 }
end

local function complete(id, key, version, run_count, mode, outcome, message, reason, cron_next, missed, overlap)
  local row = read_row(base, key)
  if mode == 'free' then
    return settle_free(row, id, key, version, run_count, outcome, message, reason)
  end
  if not row or row.id ~= id then
    return stale(nil, id, key, version, 'gone', outcome)
  end
  if row.v ~= version then
    return stale(row, id, key, version, 'version', outcome)
  end
  -- Held: still this very run (a reclaimed run's first worker is stale), and a lost one really expired.
  -- (`hc`, not `rc`: a free run's re-run may have been claimed meanwhile; `rc` for a row claimed before
  -- `hc` existed.)
  if row.s ~= 'running' or (row.hc or row.rc) ~= run_count or (outcome == 'lost' and tonumber(row.lu or '0') > now) then
    return stale(row, id, key, version, 'status', outcome)
  end
  return { 'done', complete_held(row, version, outcome, message, reason, cron_next, missed, overlap) }
end

local replies = {}
for _, run in ipairs(cjson.decode(ARGV[2])) do
  replies[#replies + 1] = complete(unpack(run))
end
call_in_slices('ZREM', base .. 'leases', unleased)
call_in_slices('HDEL', base .. 'ids', removed_ids)
call_in_slices('ZREM', base .. 'keys', removed_keys)
return replies
