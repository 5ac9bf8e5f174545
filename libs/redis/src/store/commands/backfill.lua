-- Starts a backfill (docs/spec.md §3.3c): the given slots run now, one after another, each due at its
-- slot (complete.lua arms the next from `bf`); after the last, the schedule goes on at the slot the row
-- was armed for (`bs`, moved by its jitter again; a retry's or a moved run's own due, as it was). Version + 1
-- turns the job armed for `d` stale.
-- `ba`: when the slot now armed was asked for (here: now; complete.lua: when the run before it ended),
-- the instant a backfill run's lateness counts from (its `d` is a past slot, docs/spec.md §6.1).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] key, ARGV[3] the id and ARGV[4] the version the slots were computed
--   for, ARGV[5] the slots as a JSON array, in order (at least one)
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`; with one, an 'ok' comes as the JSON text of its array, the text
--   it keeps
-- Ledger (includes/ledger, through publish_event): one 'backfilled' entry with the count and the first slot.
-- Output: { 'ok', row as pairs } | { 'not-found' (, 's', ended status) } | { 'inactive', row as pairs } (running, paused, or a
--   backfill already in progress: shown as running) | { 'retry' } unchanged when the row moved on since
--   its slots were computed

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/requests"
--- @include "includes/slots"
--- @include "includes/scope-records"

local base, prefix = KEYS[1], ARGV[1]
local key = ARGV[2]
-- a cancelAll's scope record covering the key applies first (includes/scope-records)
settle_scopes(base, prefix, { key })
local row, refusal = live_row_for(base, key, { running = true, paused = true })
if not row then
  return refusal
end
if row.bf then
  row.s = 'running'
  return reply('inactive', row)
end
if row.id ~= ARGV[3] or row.v ~= ARGV[4] then
  return { 'retry' }
end
local slots = cjson.decode(ARGV[5])
local now = now_ms()
-- its implied `armed` entry (includes/ledger) goes with the row's kept ones: it leaves `armed`
ledger_fold_armed(row)
bump_version(row)
row.bs = int(slot_of(row))
row.d = int(table.remove(slots, 1))
row.ds, row.tg = nil, nil
-- Its runs are first tries, each counted from its own slot: a pending retry's try (`at`) and where the armed
-- run counts its skips from (`cf`) wait in `bt` / `bc` for the run the backfill goes back to (run-ends).
row.bt, row.bc, row.at, row.cf = row.at, row.cf, nil, nil
row.bf = #slots > 0 and cjson.encode(slots) or '[]'
row.ba = int(now)
save_row(base, row)
arm_due(base, key, tonumber(row.d))
publish_event(prefix, row, 'scheduled', now, { due = tonumber(row.d), reason = 'backfill', count = #slots + 1 })
return reply('ok', row)
