-- Records the outcome of runs and moves their timers on (docs/design.md "Complete", docs/spec.md §3.2, §3.3).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P' (with a request: includes/requests; a repeated batch answers as the first)
--   ARGV[2] the runs as one JSON array (one argument, not ten per run: far cheaper to send), each
--     [id, key, version, runCount, mode (held | free), outcome (ok | failed | lost | late: a handler's end
--     after its worker handed the run back at shutdown, stale whatever the row: never its outcome), error message, error
--     reason, the next cron occurrence ('' unless cron), cron slots missed before the run started, cron
--     slots that came while it went on, '1' when that occurrence is a slot kept by overlap 'buffer-one'
--     (else ''), why no slot follows ('' or 'ended': endAt), '1' when the claimed row was a one-shot (a
--     hint: read_settled_row), then only in a batch of several workers the worker that ran it ('' none;
--     else ARGV[3] names it)] — strings but missed and overlap; or, for a held one-shot ending ok (mode,
--     outcome and the rest as above implied), [id, key, version, runCount] and its claim's copy of the
--     row: the lease's end, `d`, `sa`, n (a number): its kept entries `lq` are ARGV[3 + n] ('' for none)
--     — taken for the row, unread, when still true (includes/one-shot-rows claimed_copies); a free
--     run's key names its lease record (includes/free-runs) with its version. A row with a slot policy
--     (includes/slots has_slot_policy) is stepped by the worker like a cron (core slotAfterRun): its next
--     slot (and its skips) come here, interval or cron, and the slot is armed moved by its jitter.
--   ARGV[3] the worker that ran the batch's runs (and claimed its copies: their `lw`), then the copies'
--     kept entries — absent when the caller names none (a reconciler; a worker of a release before this
--     one sent it only with copies). A run's entries name its worker (includes/ledger `ledger.worker`):
--     its outcome's, or a late completion's `stale` (docs/spec.md §3.9); a lost run's, the lease owner's.
-- Output: one reply per run: { 'done', missed, overlap } with the slots the timer went past (a cron's as
--   given, an interval's counted here: grid_skips), or { 'stale', reason } when the entry changed under
--   the run (then nothing is written).

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/free-runs"
--- @include "includes/requests"
--- @include "includes/slots"
--- @include "includes/run-policies"
--- @include "includes/one-shot-rows"
--- @include "includes/run-ends"

local base, prefix = KEYS[1], ARGV[1]
local now = now_ms()
-- Index entries of the settled runs, removed once for the whole batch at the end (nothing here reads
-- them back): every held run leaves `leases`; a removed timer leaves `ids` and `keys`, and its row hash
-- goes in one DEL with the others' (`removed_rows` by key: a later run of the batch finds it gone).
local unleased, removed_ids, removed_keys, removed_rows = {}, {}, {}, {}
-- key → row table of a run settled without reading its row (includes/one-shot-rows claimed_copies)
local copies

local function remove_row(row)
  removed_rows[row.key] = true
  removed_keys[#removed_keys + 1] = row.key
  -- a closed ledger was written with its TTL (includes/ledger ledger_close_append)
  if not row.closed then
    ledger_expire(row.key, LEDGER_KEEP_MS)
  end
end

-- A lost settlement that finds nothing to settle (another reconciler was first) is not an event.
-- `other`: the row of another timer that holds the key now (a gone ref's: includes/events publish_stale).
local function stale(row, id, key, version, reason, outcome, other)
  if outcome == 'lost' then
    return { 'stale', reason }
  end
  local subject = row or { id = id, key = key }
  publish_stale(prefix, subject, other, now, { version = tonumber(version), kind = row and row.k or cjson.null, reason = reason })
  return { 'stale', reason }
end

-- pauseAfterFailures reached: the row is paused as pause.lua does (its runs abort, out of due/armed).
local function pause_row(row, fields, gone, streak)
  abort_runs(prefix, row)
  fields.ab = row.ab
  fields.v = int(tonumber(row.v) + 1)
  fields.s = 'paused'
  row.v = fields.v
  redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
  gone[#gone + 1] = 'tg'
  redis.call('HDEL', row_key(base, row.key), unpack(gone))
  redis.call('ZREM', base .. 'due', row.key)
  redis.call('ZREM', base .. 'armed', row.key)
  publish_event(prefix, row, 'paused', now, { reason = 'failures', count = streak })
end

-- A free run (awaitTask=false tick) only records its outcome: `last` while no newer run began.
local function complete_free(row, version, run_count, outcome, message, reason)
  local fields = outcome_of(prefix, now, row, version, outcome, message, reason)
  if row.rc ~= run_count then
    fields.l = nil
  end
  local gone = {}
  local streak = count_failure(row, outcome, fields, gone)
  -- a row kept only for its free runs (`rp`) has ended: nothing to pause
  if streak and is_live(row.s) then
    return pause_row(row, fields, gone, streak)
  end
  redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
  if #gone > 0 then
    redis.call('HDEL', row_key(base, row.key), unpack(gone))
  end
end

-- The run is over for good: the timer ends with `status`, kept by removeOnComplete=false, else removed
-- (then nothing it would have recorded is encoded: only the event carries the outcome). An awaitTask=false
-- timer with free runs in flight is kept until the last ends (`rp`, includes/free-runs).
local function finish(row, version, outcome, message, reason, ended)
  removed_ids[#removed_ids + 1] = row.id
  local kept_for_free_runs = row.rm ~= '0' and row.aw == '0' and has_free_runs(base, row.key, row.id)
  if row.rm == '0' or kept_for_free_runs then
    local fields = outcome_of(prefix, now, row, version, outcome, message, reason, ended)
    fields.s = outcome == 'ok' and 'completed' or 'failed'
    note_kept(base, row.key) -- a kept finished row here (cancel-all.lua's count)
    fields.rp = kept_for_free_runs and '1' or nil
    redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
    redis.call('HDEL', row_key(base, row.key), 'lw', 'lu', 'ct', 'hc', 'lq')
  else
    local last_error = outcome ~= 'ok' and last_run(now, row, outcome, message, reason).error or nil
    local attempt = outcome ~= 'ok' and attempt_of(row) or nil
    -- the outcome's entry is the last of the row's life: with its kept entries, one closed ledger write
    row.closes = true
    publish_event(prefix, row, outcome == 'ok' and 'completed' or 'failed', now, { version = tonumber(version), error = last_error, reason = ended, attempt = attempt })
    remove_row(row)
  end
end

-- The timer goes on: next version, pending again, its next due armed; the run's lease fields go. With
-- `streak` (pauseAfterFailures reached) it is paused instead.
local function rearm(row, fields, due, gone, streak)
  if streak then
    return pause_row(row, fields, gone, streak)
  end
  fields.v = int(tonumber(row.v) + 1)
  fields.d = int(due)
  gone[#gone + 1] = 's' -- pending: the default, left out (includes/row)
  redis.call('HSET', row_key(base, row.key), unpack(flat(fields)))
  redis.call('HDEL', row_key(base, row.key), unpack(gone))
  arm_due(base, row.key, due)
end

-- A failed held run with tries left (retry, docs/spec.md §3.3b): its slot runs again after the backoff under
-- a new version (`at` its try); the slots it went past are counted now, its retry counts after now (`cf`).
-- The retry's due is its own slot (`ds` goes).
local function retry_held(row, version, outcome, message, reason, missed, overlap)
  local wait = outcome == 'failed' and not row.tg and retry_wait(row, attempt_of(row))
  if not wait then
    return nil
  end
  local fields = outcome_of(prefix, now, row, version, outcome, message, reason)
  fields.at = int(attempt_of(row) + 1)
  if row.k == 'interval' and not has_slot_policy(row) and not row.bf then
    -- (a backfill slot's run skips nothing, docs/spec.md §3.3c: the worker sends a cron's none either)
    missed, overlap = grid_skips(row, count_from(row), tonumber(row.lf), next_grid_slot(row, now))
  end
  if row.k == 'once' then
    missed, overlap = 0, 0
  else
    fields.cf = int(now)
  end
  local gone = { 'lw', 'lu', 'ct', 'hc', 'ds', 'lq' }
  if not row.bf then
    -- (a backfill slot's retry keeps it: after the backfill the moved run still comes, next_backfill)
    gone[#gone + 1] = 'mv'
  end
  rearm(row, fields, now + wait, gone)
  -- no event says it: the ledger records the retry armed, its try and its due (as FirePath.recordRetry)
  ledger_append({ key = row.key, v = fields.v, sa = row.sa }, 'retried', now, { n = tonumber(fields.at), d = tonumber(fields.d) })
  publish_skips(prefix, row, now, version, missed, overlap)
  return missed, overlap
end

-- Settles a held run; returns the slots its timer went past: missed, overlap (docs/spec.md §3.3). `buffered`:
-- cron_next is a slot kept by overlap 'buffer-one', due at once (a plain interval's is picked here); `ended`:
-- why a slot policy left no next slot.
local function complete_held(row, version, outcome, message, reason, cron_next, missed, overlap, buffered, ended)
  unleased[#unleased + 1] = row.key
  -- The entries the row keeps (`lq`: its hand-off and claim) go into the ledger with the outcome's; every
  -- way on below deletes the row or drops the field with the lease fields (includes/ledger).
  row.drops_lq = true
  local retried_missed, retried_overlap = retry_held(row, version, outcome, message, reason, missed, overlap)
  if retried_missed then
    return retried_missed, retried_overlap
  end
  local final = row.mr and tonumber(row.rc or '0') >= tonumber(row.mr)
  if row.tg and not final then
    -- A trigger run does not move the schedule: back to the unchanged `d` (and its pending retry, if any).
    local fields = outcome_of(prefix, now, row, version, outcome, message, reason)
    local trigger_gone = { 'lw', 'lu', 'ct', 'hc', 'tg', 'lq' }
    rearm(row, fields, tonumber(row.d), trigger_gone, count_failure(row, outcome, fields, trigger_gone))
    return 0, 0
  elseif row.k == 'once' or final or (row.k == 'interval' and outcome == 'failed' and row.aw ~= '0') then
    -- (an awaitTask=false interval's failures never end it, docs/spec.md §3.3: its held runs are a
    -- trigger's, above, a backfill slot's, below, and the one maxRuns allows last)
    -- the last run maxRuns allows says so, whatever else ends the timer too (core release: maxRuns wins)
    finish(row, version, outcome, message, reason, final and 'max-runs' or nil)
    return 0, 0
  end
  -- (`mv`: the run reschedule moved has run; a backfill's goes back to it: next_backfill)
  local gone = { 'lw', 'lu', 'ct', 'hc', 'at', 'lq' }
  if row.bf then
    -- A backfill slot's run: the next backfill slot, or back to the schedule (paused instead: the backfill ends).
    local fields = outcome_of(prefix, now, row, version, outcome, message, reason)
    local streak = count_failure(row, outcome, fields, gone)
    if streak then
      for _, field in ipairs({ 'bf', 'bs', 'ba', 'bt', 'bc' }) do
        gone[#gone + 1] = field
      end
      rearm(row, fields, 0, gone, streak)
    else
      rearm(row, fields, next_backfill(now, row, fields, gone), gone)
    end
    return 0, 0
  end
  gone[#gone + 1] = 'mv'
  if (row.k == 'cron' or has_slot_policy(row)) and cron_next == '' then
    -- No slot comes after this run (none left, or endAt passed): the timer ends, and says why.
    finish(row, version, outcome, message, reason, ended ~= '' and ended or 'no-next-slot')
    publish_skips(prefix, row, now, version, missed, overlap)
    return missed, overlap
  end
  local fields = outcome_of(prefix, now, row, version, outcome, message, reason)
  local streak = count_failure(row, outcome, fields, gone)
  local next_due = tonumber(cron_next)
  if row.k == 'interval' and not has_slot_policy(row) then
    local every = tonumber(row.em)
    next_due = next_grid_slot(row, now)
    missed, overlap = grid_skips(row, count_from(row), tonumber(row.lf), next_due)
    -- overlap 'buffer-one': the first slot that came during the run runs at once, with its own due.
    buffered = row.ov == 'b' and overlap > 0
    if buffered then
      next_due, overlap = next_due - overlap * every, overlap - 1
    end
  end
  if buffered and not streak then
    fields.cf = int(now)
  else
    gone[#gone + 1] = 'cf'
    if buffered then
      -- Paused instead: the kept slot is skipped like the others.
      overlap = overlap + 1
    end
  end
  if not streak then
    next_due = arm_slot_fields(row, fields, next_due)
  end
  rearm(row, fields, next_due, gone, streak)
  publish_skips(prefix, row, now, version, missed, overlap)
  return missed, overlap
end

-- A free run settles against its own lease record (includes/free-runs): still this run's (not handed back
-- to run again — `w` '' —, a late completion then stale as a held run's, nor claimed again elsewhere after
-- its lease expired), and a lost one really expired. Record and lease go either way.
local function settle_free(row, id, key, version, run_count, outcome, message, reason)
  local member = free_member(key, version)
  local run = read_free_run(base, member)
  local lease = tonumber(redis.call('ZSCORE', base .. 'leases', member) or '0')
  if not run or run.rc ~= run_count or run.w == '' or (outcome == 'lost' and lease > now) or outcome == 'late' then
    -- overlap 'cancel-other': the next slot's claim took its record (claim.lua).
    local why = (not run and row and row.id == id and row.ov == 'c') and 'overlap' or 'status'
    return stale(row, id, key, version, why, outcome)
  end
  drop_free_run(base, member)
  -- (a lost run's worker is its record's; so is a run's an older release's call did not name)
  ledger.worker = ledger.worker or run.w
  if not row or row.id ~= id then
    return stale(nil, id, key, version, 'gone', outcome, row)
  end
  complete_free(row, version, run_count, outcome, message, reason)
  -- A row kept only for its free runs in flight (removeOnComplete) goes with the last of them.
  if row.rp == '1' and not has_free_runs(base, key, id) then
    remove_row(row)
    redis.call('SREM', base .. 'kr', key) -- no longer a kept finished row (includes/indexes note_kept)
  end
  return { 'done', 0, 0 }
end

-- The row a completion settles against, nil when none (or removed by this batch): only the fields a
-- held one-shot run ending ok that removes its row reads (includes/one-shot-rows read_one_shot), else
-- whole. `once`: the worker claimed a one-shot ('1'; else the HMGET would only come before a whole read).
local function read_settled_row(key, mode, outcome, cron_next, once)
  if removed_rows[key] then
    return nil
  elseif copies[key] then
    return copies[key]
  elseif once ~= '1' or mode ~= 'held' or outcome ~= 'ok' or cron_next ~= '' then
    return read_row(base, key)
  end
  return read_one_shot(base, key)
end

local function complete(id, key, version, run_count, mode, outcome, message, reason, cron_next, missed, overlap, buffered, ended, once, worker)
  -- the worker its entries name (includes/ledger): a held lost run's is its row's `lw`
  worker = worker or ARGV[3]
  ledger.worker = outcome ~= 'lost' and worker ~= '' and worker or nil
  local row = read_settled_row(key, mode, outcome, cron_next, once)
  if row then
    row.lost_run = outcome == 'lost' -- its entry is `lost` (includes/ledger); a handler's 'lost' failed
  end
  if mode == 'free' then
    return settle_free(row, id, key, version, run_count, outcome, message, reason)
  end
  if not row or row.id ~= id then
    -- (whole: a one-shot's read has only the fields its own completion needs)
    return stale(nil, id, key, version, 'gone', outcome, row and read_row(base, key))
  end
  if row.v ~= version then
    return stale(row, id, key, version, 'version', outcome)
  end
  -- Held: still this very run (a reclaimed run's first worker is stale), and a lost one really expired.
  -- (`hc`, not `rc`: a free run's re-run may have been claimed meanwhile; `rc` for a row claimed before
  -- `hc` existed.) A late end is stale even on a row still running that run: the hand-back expired its
  -- lease, and a reconcile that has not reached it yet (its batch limit) settles it after.
  if row.s ~= 'running' or (row.hc or row.rc) ~= run_count or (outcome == 'lost' and tonumber(row.lu or '0') > now) or outcome == 'late' then
    return stale(row, id, key, version, 'status', outcome)
  end
  return { 'done', complete_held(row, version, outcome, message, reason, cron_next, missed, overlap, buffered == '1', ended or '') }
end

local runs = cjson.decode(ARGV[2])
-- (the batch's held one-shots whose worker's copy stands for their row: read_settled_row)
copies = claimed_copies(base, runs)
local replies = {}
for _, run in ipairs(runs) do
  if #run == COPY_RUN_LENGTH then
    -- a held one-shot ending ok, with its claim's copy: the rest of its run implied (10 elements a run
    -- fewer for cjson to decode)
    replies[#replies + 1] = complete(run[1], run[2], run[3], run[4], 'held', 'ok', '', '', '', 0, 0, '', '', '1')
  else
    replies[#replies + 1] = complete(unpack(run))
  end
end
call_in_slices('ZREM', base .. 'leases', unleased)
remove_live_ids(base, removed_ids)
local row_hashes = {}
for i, key in ipairs(removed_keys) do
  row_hashes[i] = row_key(base, key)
end
call_in_slices('DEL', nil, row_hashes)
call_in_slices('ZREM', base .. 'keys', removed_keys)
return replies
