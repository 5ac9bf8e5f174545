-- One reconciler pass over a partition (docs/design.md "The fire path", docs/spec.md §3.8, §4.3). Idempotent,
-- so every scheduler replica may run it.
-- 1. An `armed` entry handed off more than the grace ago whose job no longer exists goes back to `due`
--    (its implied `armed` ledger entry kept on the row: includes/ledger ledger_fold_armed). Its job is
--    one take-due recorded in `jobs` at its score (the hand-off ms), or the row's `j` (the release
--    before named it there); records whose job is gone and that no `armed` entry scores go. A record
--    `<jobId>@<ms>` is a later take-due's part of that job (take-due ARGV[5]).
-- 2. A lease expired by Redis now: at-least-once, or at-most-once handed back before it started (`hb`,
--    release.lua) → pending again at the same version, back to `due`
--    (it runs again: event `requeued`, ledger entry `lost` reason 'requeued'); at-most-once → replied
--    for the caller to settle as lost (complete.lua). A free run's lease (includes/free-runs) likewise:
--    re-armed under its member, or replied lost with `fr` (at-least-once runs again even when its timer
--    ended meanwhile: that tick never ran to its end).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] graceMs, ARGV[3] batch limit, ARGV[4] the partition's BullMQ job key
--   prefix 'P:sundial-fire-{pN}:'
-- Output: { rearmed, requeued, { row as pairs } per lost run (a free run's: `fr` = '1', and `v`, `rc`,
--   `lf` of that run) }

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/free-runs"
--- @include "includes/events"

local base, prefix = KEYS[1], ARGV[1]
local grace_ms, limit, job_prefix = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local now = now_ms()
local armed_key, leases_key = base .. 'armed', base .. 'leases'

local rearmed = 0
local jobs_key = base .. 'jobs'
local handed_off = redis.call('ZRANGEBYSCORE', armed_key, '-inf', int(now - grace_ms), 'WITHSCORES', 'LIMIT', 0, limit)

-- Whether the job of a `jobs` record exists: `<jobId>`, or `<jobId>@<ms>` for a later take-due's part of it.
local function job_exists(record)
  return redis.call('EXISTS', job_prefix .. string.match(record, '^[^@]*')) == 1
end
-- Whether a job recorded at hand-off ms `at` (text) still exists (several when two calls shared the ms:
-- any one keeps the entries of that ms, until it goes too).
local job_found = {}
local function job_at_exists(at)
  local found = job_found[at]
  if found == nil then
    found = false
    for _, job in ipairs(redis.call('ZRANGEBYSCORE', jobs_key, at, at)) do
      if job_exists(job) then
        found = true
        break
      end
    end
    job_found[at] = found
  end
  return found
end
-- A free run's re-run (includes/free-runs): armed under its member while handed back and not yet claimed.
local function rearm_free_run(member)
  local run = read_free_run(base, member)
  if not run or run.w ~= '' then
    redis.call('ZREM', armed_key, member)
  elseif not run.j or redis.call('EXISTS', job_prefix .. run.j) == 0 then
    arm_due(base, member, tonumber(run.due))
    rearmed = rearmed + 1
  end
end

for i = 1, #handed_off, 2 do
  local key, at = handed_off[i], int(math.floor(tonumber(handed_off[i + 1])))
  if split_free_member(key) then
    rearm_free_run(key)
  else
    local f = redis.call('HMGET', row_key(base, key), 's', 'j', 'tg', 'd', 'v', 'rc', 'lo', 'lq', 'sa')
    if not f[4] or (f[1] or ROW_DEFAULTS.s) ~= 'pending' then
      redis.call('ZREM', armed_key, key)
    elseif not (f[2] and redis.call('EXISTS', job_prefix .. f[2]) == 1) and not job_at_exists(at) then
      local row = { key = key, s = 'pending', j = f[2] or nil, tg = f[3] or nil, d = f[4], v = f[5] or ROW_DEFAULTS.v, rc = f[6] or nil, lo = f[7] or nil, lq = f[8] or nil, sa = f[9] }
      ledger.armed[key] = handed_off[i + 1]
      if ledger_fold_armed(row) then
        redis.call('HSET', row_key(base, key), 'lq', row.lq)
      end
      arm_due(base, key, tonumber(row.tg or row.d))
      rearmed = rearmed + 1
    end
  end
end
-- The records of jobs gone whose hand-offs left no `armed` entry (claimed, or armed again above).
local records = redis.call('ZRANGEBYSCORE', jobs_key, '-inf', int(now - grace_ms), 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #records, 2 do
  local at = records[i + 1]
  if not job_exists(records[i]) and redis.call('ZCOUNT', armed_key, at, '(' .. int(at + 1)) == 0 then
    redis.call('ZREM', jobs_key, records[i])
  end
end

local requeued = 0
local lost = {}
local expired = redis.call('ZRANGEBYSCORE', leases_key, '-inf', int(now), 'LIMIT', 0, limit)
-- An expired free run's lease: its timer gone → dropped; at-most-once → replied as lost (the row's fields
-- as of that run, `fr` = '1' so it is settled as a free run); at-least-once → handed back (no worker) and
-- armed under its member, to run again — also when the timer ended meanwhile (its final run, held,
-- completed while this one's dead worker still held the lease): the tick it ran never ended, and
-- at-least-once means it runs.
local function settle_free_run(member)
  local key, version = split_free_member(member)
  local run = read_free_run(base, member)
  local row = read_row(base, key)
  if not run or not row or row.id ~= run.id then
    drop_free_run(base, member)
  elseif row.dl == 'm' and run.hb ~= run.rc then
    row.v, row.rc, row.lf, row.fr = version, run.rc, run.lf, '1'
    lost[#lost + 1] = flat(row)
  else
    record_requeue(prefix, row, now, version, run.w, run.due)
    run.w, run.hb = '', nil
    save_free_run(base, member, run)
    redis.call('ZREM', leases_key, member)
    arm_due(base, member, tonumber(run.due))
    requeued = requeued + 1
  end
end

for _, key in ipairs(expired) do
  local row = not split_free_member(key) and read_row(base, key)
  if row == false then
    settle_free_run(key)
  elseif not row or row.s ~= 'running' then
    redis.call('ZREM', leases_key, key)
  elseif row.dl == 'm' and row.hb ~= (row.hc or row.rc) then
    lost[#lost + 1] = flat(row)
  else
    -- (an at-most-once run handed back unstarted, `hb` its runCount (release.lua), runs again too)
    record_requeue(prefix, row, now, row.v, row.lw, row.tg or row.d)
    -- back to pending: `s` is the default, left out (includes/row)
    redis.call('HDEL', row_key(base, key), 's', 'lw', 'lu', 'ct', 'hc', 'hb')
    if row.cu == 's' or row.cw then
      -- `rq`: this version's run was claimed, judged by its slot policy then; put back, it runs again
      -- however late (claim.lua, docs/spec.md §3.8). Only a row a claim would judge carries it.
      redis.call('HSET', row_key(base, key), 'rq', row.v)
    end
    redis.call('ZREM', leases_key, key)
    arm_due(base, key, tonumber(row.tg or row.d))
    requeued = requeued + 1
  end
end
return { rearmed, requeued, lost }
