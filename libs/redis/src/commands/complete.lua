-- Records the outcome of runs and moves their timers on (docs/design.md "Complete", SPEC §3.2, §3.3).
-- ARGV[2..], 10 per run: id, key, version, runCount, mode (held | free), outcome (ok | failed | lost),
-- error message, error reason, the next cron occurrence ('' unless cron), cron slots skipped meanwhile.
-- One reply per run: 'done', or 'stale' when the entry changed under the run (then nothing is written).
local base, prefix = KEYS[1], ARGV[1]
local now = now_ms()

-- A lost settlement that finds nothing to settle (another reconciler was first) is not an event.
local function stale(row, id, key, version, reason, outcome)
  if outcome == 'lost' then
    return 'stale'
  end
  local subject = row or { id = id, key = key }
  publish_event(prefix, subject, 'stale', now, { version = tonumber(version), kind = row and row.k or cjson.null, reason = reason })
  return 'stale'
end

local function outcome_of(row, version, outcome, message, reason)
  local last = { started = tonumber(row.lf), ended = now, status = outcome == 'ok' and 'ok' or 'failed' }
  if outcome ~= 'ok' then
    last.error = { message = message, reason = reason ~= '' and reason or nil }
  end
  local fields = { l = cjson.encode(last) }
  if outcome == 'ok' then
    fields.lc = int(now)
  else
    fields.le = int(now)
  end
  publish_event(prefix, row, outcome == 'ok' and 'completed' or 'failed', now, { version = tonumber(version), error = last.error })
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

-- The run is over for good: the timer ends with `status` (kept by removeOnComplete=false, else removed).
local function finish(row, status, fields)
  redis.call('HDEL', base .. 'ids', row.id)
  if row.rm == '0' then
    fields.s = status
    redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
  else
    redis.call('DEL', row_key(base, row.key))
    redis.call('ZREM', base .. 'keys', row.key)
  end
end

local function rearm(row, fields, due)
  fields.v = int(tonumber(row.v) + 1)
  fields.s = 'pending'
  fields.d = int(due)
  redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
  arm_due(base, row.key, due)
end

local function complete_held(row, version, outcome, message, reason, cron_next, skipped)
  local fields = outcome_of(row, version, outcome, message, reason)
  redis.call('HDEL', row_key(base, row.key), 'lw', 'lu')
  redis.call('ZREM', base .. 'leases', row.key)
  local final = row.mr and tonumber(row.rc or '0') >= tonumber(row.mr)
  if row.tg and not final then
    -- A trigger run does not move the schedule: back to the unchanged `d`.
    redis.call('HDEL', row_key(base, row.key), 'tg')
    rearm(row, fields, tonumber(row.d))
  elseif row.k == 'once' or final or (row.k == 'interval' and outcome == 'failed') then
    finish(row, outcome == 'ok' and 'completed' or 'failed', fields)
  elseif row.k == 'interval' then
    rearm(row, fields, next_grid_slot(row, now))
  else
    rearm(row, fields, tonumber(cron_next))
    if skipped > 0 then
      publish_event(prefix, row, 'skipped', now, { version = tonumber(version), reason = 'overlap', count = skipped })
    end
  end
end

local function complete(id, key, version, run_count, mode, outcome, message, reason, cron_next, skipped)
  local row = read_row(base, key)
  if not row or row.id ~= id then
    return stale(nil, id, key, version, 'gone', outcome)
  end
  if mode == 'free' then
    complete_free(row, version, run_count, outcome, message, reason)
    return 'done'
  end
  if row.v ~= version then
    return stale(row, id, key, version, 'version', outcome)
  end
  -- Held: still this very run (a reclaimed run's first worker is stale), and a lost one really expired.
  if row.s ~= 'running' or row.rc ~= run_count or (outcome == 'lost' and tonumber(row.lu or '0') > now) then
    return stale(row, id, key, version, 'status', outcome)
  end
  complete_held(row, version, outcome, message, reason, cron_next, skipped)
  return 'done'
end

local replies = {}
for i = 2, #ARGV, 10 do
  replies[#replies + 1] = complete(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5],
    ARGV[i + 6], ARGV[i + 7], ARGV[i + 8], tonumber(ARGV[i + 9]))
end
return replies
