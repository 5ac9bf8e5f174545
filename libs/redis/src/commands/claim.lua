-- Claims the timers of one fire job (docs/design.md "Fire path contract", SPEC §3.2, §3.8).
-- ARGV[2] leaseMs, ARGV[3] worker id, then (id, key, version) per timer. One reply per timer:
--   { 'held' | 'free', due, row... }  claimed (row after the claim, HGETALL-style)
--   { 'early', waitMs }               not due yet by Redis's clock: claim again later, never run early
--   { 'stale', reason }               gone | version | status: acknowledged, never run
--   { 'lost', row... }                at-most-once and its worker's lease expired: settle as lost
local base, prefix = KEYS[1], ARGV[1]
local lease_ms, worker = tonumber(ARGV[2]), ARGV[3]
local now = now_ms()

local function stale(row, id, key, version, reason)
  local subject = row or { id = id, key = key, v = version }
  publish_event(prefix, subject, 'stale', now, { version = tonumber(version), kind = row and row.k or cjson.null, reason = reason })
  return { 'stale', reason }
end

-- A free run: an awaitTask=false interval arms its next tick at claim and keeps ticking while this run
-- goes on; a trigger run and the run that reaches maxRuns are held like any other.
local function is_free(row, run_count)
  return row.s == 'pending' and row.k == 'interval' and row.aw == '0' and not row.tg
    and (not row.mr or run_count < tonumber(row.mr))
end

local function claim(id, key, version)
  local row = read_row(base, key)
  if not row or row.id ~= id then
    return stale(nil, id, key, version, 'gone')
  end
  if row.v ~= version then
    return stale(row, id, key, version, 'version')
  end
  if row.s == 'running' then
    -- Same version still running: a duplicate delivery while its worker lives, or a dead worker's run.
    if tonumber(row.lu or '0') > now then
      return stale(row, id, key, version, 'status')
    end
    if row.dl == 'm' then
      return { 'lost', unpack(flat(row)) }
    end
  elseif row.s ~= 'pending' then
    return stale(row, id, key, version, 'status')
  end
  local due = tonumber(row.tg or row.d)
  if row.s == 'pending' and now < due then
    return { 'early', int(due - now) }
  end

  local run_count = tonumber(row.rc or '0') + 1
  local free = is_free(row, run_count)
  local fields = {
    rv = version,
    rc = int(run_count),
    lf = int(now),
    l = cjson.encode({ started = now, status = 'running' }),
  }
  publish_event(prefix, row, 'running', now, { due = due })
  if free then
    local next_due = next_grid_slot(row, now)
    fields.v = int(tonumber(version) + 1)
    fields.d = int(next_due)
    arm_due(base, key, next_due)
  else
    local lease_until = now + lease_ms
    fields.s = 'running'
    fields.lw = worker
    fields.lu = int(lease_until)
    redis.call('ZREM', base .. 'due', key)
    redis.call('ZREM', base .. 'armed', key)
    redis.call('ZADD', base .. 'leases', lease_until, key)
  end
  redis.call('HSET', row_key(base, key), unpack(flat(fields)))
  for field, value in pairs(fields) do
    row[field] = value
  end
  return { free and 'free' or 'held', int(due), unpack(flat(row)) }
end

local replies = {}
for i = 4, #ARGV, 3 do
  replies[#replies + 1] = claim(ARGV[i], ARGV[i + 1], ARGV[i + 2])
end
return replies
