-- Resumes a paused timer. The next due is computed from now: an interval's next grid slot (same math as
-- core nextGridSlot; none before startAt), a once timer's own due (or now when it passed), the given cron
-- occurrence. A periodic timer whose next slot is after its endAt (`ea`: it passed while paused) has none
-- left: it ends as a late slot past endAt does (pass-late.lua; reason 'ended', no `scheduled`).
-- Resuming a timer that is not paused changes nothing.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] key, ARGV[3] a cron's next occurrence after the caller's estimate of
--   Redis now ('' for other kinds)
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`; with one, an 'ok' comes as the JSON text of its array, the text
--   it keeps
-- Output: { 'ok', row as pairs } (`s` completed or failed: it ended) | { 'not-found' (, 's', ended status) } |
--   { 'retry', now } unchanged when the cron occurrence is not after now

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/requests"
--- @include "includes/slots"
--- @include "includes/slot-ends"
--- @include "includes/scope-records"

local base, prefix = KEYS[1], ARGV[1]
local key = ARGV[2]
-- a cancelAll's scope record covering the key applies first (includes/scope-records)
settle_scopes(base, prefix, { key })
local row, refusal = live_row_for(base, key, {})
if not row then
  return refusal
end
if row.s ~= 'paused' then
  return reply('ok', row)
end

local now = now_ms()
local due
if row.k == 'interval' then
  -- none before startAt (`st`): next_grid_slot starts there, as core fromStart
  due = next_grid_slot(row, now)
elseif row.k == 'cron' then
  due = tonumber(ARGV[3])
  if due <= now then
    return { 'retry', int(now) }
  end
else
  due = math.max(tonumber(row.d), now)
end
if row.k ~= 'once' and row.ea and due > tonumber(row.ea) then
  -- (at its paused version, as the engine's: nothing is armed)
  end_without_slot(base, prefix, row, now, 'ended')
  return reply('ok', row)
end
bump_version(row)
row.s = 'pending'
if row.k == 'once' then
  row.d = int(due)
else
  due = arm_slot_fields(row, row, due) -- a periodic slot moved by its jitter
end
-- A fresh start: the failure streak (pauseAfterFailures), any retry left pending and a run reschedule
-- moved (`mv`) are over.
row.fs, row.at, row.cf, row.mv = nil, nil, nil, nil
save_row(base, row)
arm_due(base, key, due)
publish_event(prefix, row, 'scheduled', now, { due = due, reason = 'resume' })
return reply('ok', row)
