-- Moves a live timer: same id, version + 1, new scheduledAt/dueAt, status pending. Refused 'inactive'
-- while running (replace supersedes running work).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] key, ARGV[3] 'delay' | 'at', ARGV[4] ms
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers as the
--   first did
-- Output: { 'ok', row as pairs } | { 'not-found' } | { 'inactive', row as pairs }

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/requests"

local base, prefix = KEYS[1], ARGV[1]
local key, mode, value = ARGV[2], ARGV[3], tonumber(ARGV[4])
local row, refusal = live_row_for(base, key, { running = true })
if not row then
  return refusal
end

local now = now_ms()
local due = value -- an `at` already past is due at once
if mode == 'delay' then
  due = now + value
end
if row.k == 'once' then
  -- delayMs describes a once timer's schedule: keep it true to the new one.
  row.dm = mode == 'delay' and int(value) or nil
end
abort_runs(prefix, row)
-- its implied `armed` entry (includes/ledger) goes with the row's kept ones: it leaves `armed`
ledger_fold_armed(row)
ledger_open(row)
bump_version(row)
row.s = 'pending'
row.sa = int(now)
row.d = int(due)
row.tg = nil
row.at, row.cf = nil, nil -- a pending retry is over: the new due is a first try
-- an explicit due is its own slot; a backfill in progress ends (docs/spec.md §3.3c)
row.ds, row.bf, row.bs = nil, nil, nil
save_row(base, row)
arm_due(base, key, due)
publish_event(prefix, row, 'scheduled', now, { due = due, reason = 'reschedule' })
return reply('ok', row)
