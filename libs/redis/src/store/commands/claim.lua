-- Claims the timers of one fire job (docs/design.md "Fire path contract", docs/spec.md §3.2, §3.8).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P' (with a request: includes/requests; its id is the claim token), ARGV[2] leaseMs,
--   ARGV[3] worker id, ARGV[4] '1' when the worker already found these slots not late by core's slot
--   rule (a claim again after 'check'), else '0' — followed, only from a worker that lacks handlers a
--   live worker of the partition announces (fire/handler-presence.ts), by a JSON array of those names
--   (e.g. `0["h2"]`; a worker with every announced handler sends the one character), ARGV[5] aheadMs
--   (how long before its due by Redis's clock a pending timer may be claimed, ≥ 0), then (id, key,
--   version) per timer
-- Output: one reply per timer (a repeated call with the same token answers its first reply; a ref the
--   call names again after claiming it is a duplicate: { 'stale', 'status' }, never claimed twice):
--   { 'held' | 'free', due, leftUs, row }  claimed (the row after the claim; a free run's `d` is its
--                                  next tick, and the grid slots between `due` and it are one 'skipped'
--                                  event; a free run's re-run adds 'rerun', its slots already counted;
--                                  a held run adds its kept entries — a one-shot's `lq`, else '' — and
--                                  'requeued' when it took over the run of a worker whose lease had
--                                  expired, at-least-once or handed back unstarted (`hb`, release.lua):
--                                  the worker counts it as the reconciler would).
--                                  leftUs: µs from this call's Redis TIME to the due (0 once due): the
--                                  worker starts the handler that long after the reply reaches it, so
--                                  never before the due by Redis's clock
--   { 'early', waitMs }            more than aheadMs before the due by Redis's clock: claim again in
--                                  waitMs (when it is aheadMs away), never run early
--   { 'check', due, row }          unchanged: a slot policy may skip this late slot (catchup 'skip',
--                                  catchupWindow); the worker asks core lateSlot, then passes it
--                                  (pass-late.lua) or claims again with ARGV[4] '1'
--   { 'stale', reason }            gone | version | status: acknowledged, never run
--   { 'lost', row }                at-most-once and its worker's lease expired (not a run handed back
--                                  before it started: `hb`): settle as lost
--   { 'passed', jobId }            its handler is one this worker lacks (ARGV[4]) and it is less than
--                                  PASS_FOR_MS past its due: not claimed, nothing of its run written
--                                  (runCount, lf, last, ledger run entries, `running`). A pending row is
--                                  handed off again: `armed` at Redis now, and `jobs` records jobId (one
--                                  per call), the fire job the worker adds (50 ms later) for another;
--                                  '' when it waits in `due` (the dispatcher hands it off) or is a dead
--                                  worker's run (left to the reconciler's requeue)
-- Run policies (docs/design.md "Run policies"): a retry's claim (`at`) does not add to runCount; overlap
-- 'cancel-other' aborts the slot before; a cron that does not await its runs is turned free by detach.lua.
-- A row is replied as one JSON object (with `key`), far cheaper to reply and parse than an HGETALL array,
-- without what the worker knows or derives (includes/claim-replies; store/claim-reply.ts puts it back).

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/free-runs"
--- @include "includes/requests"
--- @include "includes/slots"
--- @include "includes/armed-scores"
--- @include "includes/claim-replies"

local base, prefix = KEYS[1], ARGV[1]
local lease_ms, worker = tonumber(ARGV[2]), ARGV[3]
local checked = ARGV[4] == '1'
-- handler → true for those this worker lacks that a live worker announces; nil (no check per timer) if none
local lacking = nil
if #ARGV[4] > 1 then
  checked = string.sub(ARGV[4], 1, 1) == '1'
  lacking = {}
  for _, name in ipairs(cjson.decode(string.sub(ARGV[4], 2))) do
    lacking[name] = true
  end
end
-- How long past its due a timer of a lacking handler is still passed on: later it is claimed (and fails
-- `unknown-handler`), so no run waits on workers that never take it.
local PASS_FOR_MS = 60000
-- The fire job this call's passed timers go in (named after the first), recorded once in `jobs`.
local passed_job = nil
local ahead_ms = tonumber(ARGV[5])
-- the ARGV index of the first ref's id (its key follows)
local FIRST_REF = 6
-- The claim token (includes/requests), kept by a held run (`ct`) and a free run's record: a call repeated knows it.
local token = request.id
-- The refs (free_member) this call claimed: a job an older dispatcher filled may name one twice (a timer
-- the reconciler re-armed, taken again): its second ref is a duplicate, not this claim repeated (`duplicate`).
local claimed_refs = {}
-- Held runs whose duplicate's `stale` entry wrote their kept entries: lease marked at the end (includes/ledger).
local duplicated = {}
local worker_json = cjson.encode(worker)
local now_micros = now_us()
local now = math.floor(now_micros / 1000)
local now_text, lease_until = int(now), int(now + lease_ms)
-- Index moves, made once for the whole batch at the end: held runs leave `due`/`armed` for `leases`;
-- free runs arm their next tick (after the held moves, so its wake sees `due` as it will be).
local held, leases, next_ticks = {}, {}, {}
-- Its entries (claimed, stale) name the claiming worker (includes/ledger).
ledger.worker = worker

local function stale(row, id, key, version, reason, other)
  local subject = row or { id = id, key = key, v = version }
  publish_stale(prefix, subject, other, now, { version = tonumber(version), kind = row and row.k or cjson.null, reason = reason })
  return { 'stale', reason }
end

-- A ref whose version the row has passed may name a free run (includes/free-runs): this very claim again
-- (first answer), or one handed back for a re-run (claimed now, runCount + 1). Nil when it names none.
local function claim_free_run(row, key, version)
  local member = free_member(key, version)
  local run = read_free_run(base, member)
  if not run or run.id ~= row.id then
    return nil
  end
  local keeps_last = false
  if run.w == '' then
    run.rc = int(tonumber(row.rc or '0') + 1)
    run.lf, run.w, run.t, run.j, run.r = now_text, worker, token or '', nil, '1'
    save_free_run(base, member, run)
    held[#held + 1] = member -- out of `armed`, where its re-run's job took it
    leases[#leases + 1] = lease_until
    leases[#leases + 1] = member
    row.rc, row.lf = run.rc, now_text
    row.l = '{"started":' .. now_text .. ',"status":"running"}'
    redis.call('HSET', row_key(base, key), 'rc', row.rc, 'lf', row.lf, 'l', row.l)
    -- (the row's kept entries, and its tick's implied `armed` one, are older: they go first; that tick
    -- stays armed)
    local folded = ledger_fold_armed(row)
    publish_event(prefix, { id = row.id, key = key, v = version, k = row.k, sa = row.sa, lq = row.lq }, 'running', now, { due = tonumber(run.due) })
    ledger_mark_armed(key, folded)
    row.lq = nil
  elseif run.w ~= worker or not token or run.t ~= token then
    return nil
  else
    -- this very claim again: the row's `l` may be a later run's
    keeps_last = true
  end
  row.rc, row.lf = run.rc, run.lf
  -- A re-run's missed slots were counted at its first claim: 'rerun' says so.
  return claimed_reply(now_micros, 'free', run.due, row, run.r and 'rerun' or nil, keeps_last)
end

-- overlap 'cancel-other': the run of the slot before (`rv`, a free run) is stopped cluster-wide and its record
-- goes, so its completion is stale (complete.lua answers reason 'overlap').
local function cancel_other(row, key)
  if row.ov ~= 'c' or not row.rv then
    return
  end
  local member = free_member(key, row.rv)
  if redis.call('HEXISTS', base .. 'free', member) == 1 then
    drop_free_run(base, member)
    -- a run handed back for a re-run waits in due/armed under its member: it is not to run either
    redis.call('ZREM', base .. 'due', member)
    redis.call('ZREM', base .. 'armed', member)
    redis.call('PUBLISH', prefix .. ':abort', cjson.encode({ key = key, id = row.id, version = tonumber(row.rv) }))
  end
end

-- A timer this worker lacks the handler of, handed to another worker (the reply's header): its row is not
-- written. A pending row leaves its job for one the worker adds; its `armed` score becomes this hand-off
-- (the implied `armed` entry of the hand-off that runs it; the reconciler's grace counts from it).
local function pass_on(row, key, version)
  if row.s ~= 'pending' or redis.call('ZSCORE', base .. 'due', key) then
    return { 'passed', '' }
  end
  if not passed_job then
    passed_job = 't-' .. row.id .. '-v' .. version .. '-p' .. int(now_micros)
    redis.call('ZADD', base .. 'jobs', now_text, passed_job)
  end
  redis.call('ZADD', base .. 'armed', now_text, key)
  return { 'passed', passed_job }
end

local function claim(id, key, version)
  local row = read_row(base, key)
  if not row or row.id ~= id then
    -- A free run handed back for a re-run whose timer went meanwhile: nothing to run, nothing to keep.
    redis.call('HDEL', base .. 'free', free_member(key, version))
    return stale(nil, id, key, version, 'gone', row)
  end
  if row.v ~= version then
    read_armed_scores(base, FIRST_REF + 1)
    return claim_free_run(row, key, version) or stale(row, id, key, version, 'version')
  end
  if row.s == 'running' and row.lw == worker and token and row.ct == token then
    -- This very claim again (its reply was lost and the call repeated): its first answer (its runCount
    -- is `hc`, whatever a free run's re-run did to `rc` meanwhile).
    row.rc = row.hc or row.rc
    return claimed_reply(now_micros, 'held', row.tg or row.d, row)
  end
  -- 'requeued' when this claim takes over a dead worker's at-least-once run (counted by the worker)
  local requeued = nil
  if row.s == 'running' then
    -- Same version still running: a duplicate delivery while its worker lives, or a dead worker's run.
    if tonumber(row.lu or '0') > now then
      return stale(row, id, key, version, 'status')
    end
    -- (an at-most-once run its closing worker handed back before its handler was called, `hb` its
    -- runCount, never ran: taken over to run here, as the reconciler puts it back: release.lua)
    if row.dl == 'm' and row.hb ~= (row.hc or row.rc) then
      return { 'lost', cjson.encode(row) }
    end
    requeued = 'requeued'
  elseif row.s ~= 'pending' then
    return stale(row, id, key, version, 'status')
  end
  local due_text = row.tg or row.d
  -- (`+ 0`, not tonumber: Lua 5.1's tonumber parses a string twice, ~1k instructions; the coercion once.
  -- A number text this store wrote either way, read as the same number.)
  local due = due_text + 0
  if lacking and lacking[row.h] and now < due + PASS_FOR_MS then
    return pass_on(row, key, version)
  end
  if row.s == 'pending' and now + ahead_ms < due then
    return { 'early', int(due - ahead_ms - now) }
  end
  -- When the run starts by Redis's clock: a claim up to aheadMs before the due starts it at the due
  -- (the worker waits the reply's leftMs). Its start fields (`lf`, `l.started`), its `running` event and
  -- a free run's next tick and missed slots are reckoned from it; its `claimed` entry and its lease from
  -- the claim itself (`now`), when they happened.
  local start = math.max(now, due)
  local start_text = int(start)
  -- A retry (`at`) runs its slot again, a trigger or backfill run was asked for, so was a run reschedule
  -- moved (`mv`), and the slot overlap 'buffer-one' kept (`cf`) runs right after the run it came during:
  -- none is late (core slotToJudge). Nor is a run the reconciler put back (`rq` its version, reconcile.lua):
  -- judged at its first claim, it runs again, as a claim taking a dead worker's run over runs it.
  local judged = checked or row.rq == row.v
  if row.s == 'pending' and not judged and not row.tg and not row.bf and not row.at and not row.cf and not row.mv and (row.cu == 's' or row.cw) then
    return { 'check', int(due), cjson.encode(row) }
  end

  read_armed_scores(base, FIRST_REF + 1)
  -- A retry (`at`, docs/spec.md §3.3b) is its slot's run again: it does not count in runCount.
  local run_count = (row.rc or 0) + ((row.at and not row.tg) and 0 or 1)
  local free = is_free(row, run_count, start)
  -- The hand-off's implied `armed` entry (includes/ledger) goes first into the kept entries: the row
  -- leaves `armed` now. A held run's `claimed` entry waits on the row after it (`kept`: the completion
  -- writes them all in one LPUSH); a free run's is written at once, by its `running` event.
  local kept
  if requeued then
    -- the dead worker's run ends here, told as the reconciler's requeue tells it: before this claim's entry
    row.lq = record_requeue(prefix, row, now, row.v, row.lw, due, true)
  end
  if free then
    ledger_fold_armed(row)
  else
    kept = ledger_keep_claimed(row, now_text, worker_json, due_text)
  end
  cancel_other(row, key)
  if free then
    publish_event(prefix, row, 'running', start, { due = due })
  else
    announce_event(prefix, row, 'running', start, { due = due })
  end
  -- The row table becomes the row after the claim (it is the reply); HSET writes just what changed.
  row.rv, row.rc, row.lf = version, int(run_count), start_text
  row.l = '{"started":' .. start_text .. ',"status":"running"}'
  local hash = row_key(base, key)
  if free then
    local next_slot = next_grid_slot(row, start)
    local next_due = arm_slot_fields(row, row, next_slot)
    row.v = int(tonumber(version) + 1)
    next_ticks[#next_ticks + 1] = { key, next_due }
    redis.call('HSET', hash, 'rv', row.rv, 'rc', row.rc, 'lf', row.lf, 'l', row.l, 'v', row.v, 'd', row.d)
    if row.ds then
      redis.call('HSET', hash, 'ds', row.ds)
    end
    -- A run reschedule moved (`mv`) counts its skips from the reschedule (`cf`) when its due had passed;
    -- the next tick is a slot again (rare: a free run that was moved).
    local count_from = row.cf or due
    if row.mv or row.cf then
      redis.call('HDEL', hash, 'mv', 'cf')
    end
    -- Its own lease, beside the row (includes/free-runs): the next tick is not held up by it.
    local member = free_member(key, version)
    save_free_run(base, member, { id = id, w = worker, t = token or '', rc = row.rc, due = int(due), lf = start_text })
    leases[#leases + 1] = lease_until
    leases[#leases + 1] = member
    -- Grid slots that passed since `due` are not made up: they are missed (the worker counts them from
    -- the reply's row the same way).
    publish_skips(prefix, row, start, version, grid_skips(row, tonumber(count_from), start, next_slot), 0)
  else
    row.s, row.lw, row.lu, row.ct = 'running', worker, lease_until, token
    held[#held + 1] = key
    leases[#leases + 1] = lease_until
    leases[#leases + 1] = key
    row.lq = kept
    local written = { 'rc', row.rc, 'lf', row.lf, 'l', row.l, 's', row.s, 'lw', worker, 'lu', lease_until, 'ct', token or '' }
    if row.aw == '0' or row.hc then
      -- `hc`: this held run's runCount. `rc` counts every claim, and a free run's re-run (awaitTask=false
      -- only) claimed while this run goes on moves it; completion and renewal know the held run by `hc`,
      -- else by `rc` (`hc or rc`). `rv`: the version a free run may still run (abort_runs, cancel_other).
      -- A timer that awaits its task has no free runs: `rc` is its held run's, and no reader asks its
      -- `rv`, so neither is written (~2 fields of the row's dict). A `hc` left by an earlier release's
      -- claim is kept true.
      row.hc = row.rc
      written[#written + 1] = 'hc'
      written[#written + 1] = row.hc
      written[#written + 1] = 'rv'
      written[#written + 1] = row.rv
    end
    if kept then
      written[#written + 1] = 'lq'
      written[#written + 1] = kept
    end
    redis.call('HSET', hash, unpack(written))
    if row.hb or row.rq then
      -- the hand-back's and the requeue's marks are for the run put back, which this one takes over
      redis.call('HDEL', hash, 'hb', 'rq')
      row.hb, row.rq = nil, nil
    end
  end
  return claimed_reply(now_micros, free and 'free' or 'held', due_text, row, nil, nil, requeued)
end

-- A ref this call claimed already, named again: stale 'status', as a duplicate delivery in a call of its
-- own is; its entry writes the claim's kept entries, so the worker's copy of them is no longer the row's.
local function duplicate(id, key, version)
  local row = read_row(base, key)
  if row and row.s == 'running' and row.lw == worker then
    duplicated[#duplicated + 1] = key
  end
  return stale(row, id, key, version, 'status')
end

local replies = {}
for i = FIRST_REF, #ARGV, 3 do
  local member = free_member(ARGV[i + 1], ARGV[i + 2])
  local reply
  if claimed_refs[member] then
    reply = duplicate(ARGV[i], ARGV[i + 1], ARGV[i + 2])
  else
    reply = claim(ARGV[i], ARGV[i + 1], ARGV[i + 2])
    if reply[1] == 'held' or reply[1] == 'free' then
      claimed_refs[member] = true
    end
  end
  replies[#replies + 1] = reply
end
-- A held run is in neither `due` nor `armed` (it may be in `due` again after a reconciler re-arm). A key
-- is never in both (includes/indexes): when `armed` had every one, `due` has none and is left alone.
if call_in_slices('ZREM', base .. 'armed', held) < #held then
  call_in_slices('ZREM', base .. 'due', held)
end
call_in_slices('ZADD', base .. 'leases', leases)
for _, key in ipairs(duplicated) do
  ledger_mark_lease(key)
end
for _, tick in ipairs(next_ticks) do
  arm_due(base, tick[1], tick[2])
end
return replies
