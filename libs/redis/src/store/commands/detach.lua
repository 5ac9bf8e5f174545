-- Lets a claimed cron run go on as a free run (overlap 'allow' / 'cancel-other', docs/design.md "Free runs").
-- claim.lua holds a cron's run, since its next slot is cron math done in JS; the worker then hands in that
-- slot, and the row arms it while the run goes on under its own lease record (includes/free-runs), as an
-- awaitTask=false interval's tick does at claim.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] worker id, ARGV[3] key, ARGV[4] version, ARGV[5] runCount, ARGV[6] the next
--   slot (armed moved by its jitter, includes/slots), ARGV[7] the slots missed before the run started (one
--   'skipped' event)
-- Output: 1 the run is free (`<key>|<version>`; also for a repeated call), 0 the row is no longer this run's
--   (it was cancelled, replaced, or its lease expired): the run is stale and stays held.

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/free-runs"
--- @include "includes/slots"

local base, prefix = KEYS[1], ARGV[1]
local worker, key, version, run_count = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local next_slot, missed = tonumber(ARGV[6]), tonumber(ARGV[7])
local member = free_member(key, version)
local row = read_row(base, key)
if not row or row.v ~= version or row.s ~= 'running' or row.lw ~= worker or row.rc ~= run_count then
  local run = read_free_run(base, member)
  return (run and run.w == worker and run.rc == run_count) and 1 or 0
end
save_free_run(base, member, { id = row.id, w = worker, t = row.ct or '', rc = row.rc, due = row.d, lf = row.lf })
local lease = redis.call('ZSCORE', base .. 'leases', key)
redis.call('ZREM', base .. 'leases', key)
redis.call('ZADD', base .. 'leases', lease, member)
row.v, row.s = int(tonumber(version) + 1), 'pending'
local next_due = arm_slot_fields(row, row, next_slot)
redis.call('HSET', row_key(base, key), 'v', row.v, 'd', row.d)
if row.ds then
  redis.call('HSET', row_key(base, key), 'ds', row.ds)
end
-- `s` pending: the default, left out (includes/row); the slot armed is no moved run (`mv`, `cf`: reschedule.lua)
redis.call('HDEL', row_key(base, key), 's', 'lw', 'lu', 'ct', 'hc', 'mv', 'cf')
arm_due(base, key, next_due)
publish_skips(prefix, row, now_ms(), version, missed, 0)
return 1
