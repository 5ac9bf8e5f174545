-- Hands due timers to BullMQ: moves the `due` entries with score <= Redis now + lead to `armed`
-- (score = now, the hand-off time the reconciler's grace counts from) and records the job it names
-- (`t-<id>-v<version>-r<runCount>` of its first timer) in `P:{pN}:jobs`, scored by that hand-off time:
-- the reconciler finds a handed-off row's job there. Nothing is written on the rows: their `armed` ledger
-- entry is implied by the row being in `armed` (includes/ledger ledger_fold_armed). With a lead a job
-- reaches a worker before its timers are due; the claim still refuses them until they are.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] timers this call takes at most (a fire job's share of one call: the
--   dispatcher's CALLS_PER_JOB calls fill a job), ARGV[3] lead ms,
--   ARGV[4] '' or the jobId of the dispatcher's job still open (not yet added), which this call's timers
--   extend: they are named so, and recorded in `jobs` as `<jobId>@<now>` (a member of its own, at this
--   call's hand-off ms; the reconciler reads the jobId before the '@'), so one job carries several calls'
--   timers while no call takes more than ARGV[2] of them (docs/design.md "Commands per fired timer")
-- Output: { next due score left in `due` or '', now, { jobId, id, key, version, due, ... } of the one job
--   the call's timers go in ({} when it took none), { key, traceparent, kind, ... } of the timers whose
--   row records the caller's trace (`tp`) } (a free run handed back for a re-run waits in `due` as
--   `<key>|<version>`: its ref names the key)

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/free-runs"
--- @include "includes/ledger"

local base = KEYS[1]
local limit, lead_ms = tonumber(ARGV[2]), tonumber(ARGV[3])
local open_job = ARGV[4] or ''
local now = now_ms()
local now_text = int(now)
local due_key, armed_key = base .. 'due', base .. 'armed'

local armed, traced = {}, {}
local job, job_record
-- One entry more than a call takes: when it comes (more is due within the lead than this call takes, as
-- in a backlog), it is the first left in `due`, the next due this call answers — no ZRANGE for it.
local entries = redis.call('ZRANGEBYSCORE', due_key, '-inf', int(now + lead_ms), 'WITHSCORES', 'LIMIT', 0, limit + 1)
local next_due = nil
if #entries > 2 * limit then
  next_due = entries[#entries]
  entries[#entries], entries[#entries - 1] = nil, nil
end
if #entries > 0 then
  -- They are the lowest scores of `due`, so ranks 0..n-1: one call removes them all.
  redis.call('ZREMRANGEBYRANK', due_key, 0, int(#entries / 2 - 1))
end
-- Hands off the intent `key` (score `score`) that take-due took out of `due`.
local function hand_off(key, score)
  local hash = row_key(base, key)
  -- A free run handed back for a re-run (includes/free-runs) waits under `<key>|<version>`: its ref names
  -- that version, its job is `t-<id>-v<version>-r<runCount>f`, and its record, not the row, keeps the jobId.
  -- Its trace is its row's.
  local ref_key, version = nil, nil
  if string.find(key, '|', 1, true) then
    ref_key, version = split_free_member(key)
  end
  local run = ref_key and read_free_run(base, key)
  local row
  if run and run.w == '' then
    local owner = redis.call('HMGET', row_key(base, ref_key), 'tp', 'sa', 'lq', 's', 'v', 'd', 'tg', 'rc', 'lo', 'j')
    row = { run.id, version, 'pending', run.rc .. 'f', owner[1] }
    -- rare: its entry is written at once (with what its row keeps before it, and its own implied one)
    local subject = {
      key = ref_key, sa = owner[2] or nil, lq = owner[3] or nil, s = owner[4] or ROW_DEFAULTS.s, v = owner[5] or ROW_DEFAULTS.v,
      d = owner[6] or nil, tg = owner[7] or nil, rc = owner[8] or nil, lo = owner[9] or nil, j = owner[10] or nil,
    }
    ledger_append(subject, 'armed', now, { d = tonumber(score) }, version)
  elseif ref_key then
    row = {}
  else
    row, ref_key = redis.call('HMGET', hash, 'id', 'v', 's', 'rc', 'tp', 'j'), key
    row[2], row[3] = row[2] or ROW_DEFAULTS.v, row[3] or ROW_DEFAULTS.s
    if row[6] then
      -- named by a release before this one: this hand-off's job is in `jobs`, its entry implied
      redis.call('HDEL', hash, 'j')
    end
  end
  -- An intent whose row is gone or no longer pending is dropped: nothing would claim it.
  if row[1] and row[3] == 'pending' then
    if not job then
      if open_job ~= '' then
        job, job_record = { open_job }, open_job .. '@' .. now_text
      else
        job = { 't-' .. row[1] .. '-v' .. row[2] .. '-r' .. (row[4] or '0') }
        job_record = job[1]
      end
    end
    if run then
      run.j = job[1]
      save_free_run(base, key, run)
    end
    armed[#armed + 1] = now_text
    armed[#armed + 1] = key
    job[#job + 1] = row[1]
    job[#job + 1] = ref_key
    job[#job + 1] = row[2]
    job[#job + 1] = score
    if row[5] then
      traced[#traced + 1] = ref_key
      traced[#traced + 1] = row[5]
      traced[#traced + 1] = redis.call('HGET', row_key(base, ref_key), 'k') or ROW_DEFAULTS.k
    end
  end
end

-- No key a cancelAll's scope record covers is among them: the mark takes it out of `due`
-- (cancel-all.lua), so take-due need not look.
for i = 1, #entries, 2 do
  hand_off(entries[i], entries[i + 1])
end
call_in_slices('ZADD', armed_key, armed)
if job then
  redis.call('ZADD', base .. 'jobs', now_text, job_record)
end

if not next_due then
  next_due = redis.call('ZRANGE', due_key, 0, 0, 'WITHSCORES')[2] or ''
end
return { next_due, now_text, job or {}, traced }
