-- Runs a pending timer once now, out of band, without moving its schedule: `tg` = now marks the
-- trigger run (the claim uses it as that run's due; complete clears it and re-arms at the unchanged
-- `d`); version + 1 turns the job already armed for `d` stale. Refused 'inactive' unless pending.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] key
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`; with one, an 'ok' comes as the JSON text of its array, the text
--   it keeps
-- Output: { 'ok', row as pairs } | { 'not-found' (, 's', ended status) } | { 'inactive', row as pairs }

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/requests"
--- @include "includes/scope-records"

local base, prefix = KEYS[1], ARGV[1]
local key = ARGV[2]
-- a cancelAll's scope record covering the key applies first (includes/scope-records)
settle_scopes(base, prefix, { key })
local row, refusal = live_row_for(base, key, { running = true, paused = true })
if not row then
  return refusal
end
local now = now_ms()
-- its implied `armed` entry (includes/ledger) goes with the row's kept ones: it leaves `armed`
ledger_fold_armed(row)
bump_version(row)
row.tg = int(now)
save_row(base, row)
arm_due(base, key, now)
publish_event(prefix, row, 'scheduled', now, { due = now, reason = 'trigger' })
return reply('ok', row)
