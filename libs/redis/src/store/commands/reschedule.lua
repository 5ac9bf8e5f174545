-- Moves a live timer: same id, version + 1, new scheduledAt/dueAt, status pending. Refused 'inactive'
-- while running (replace supersedes running work).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] key, ARGV[3] 'delay' | 'at', ARGV[4] ms
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
--- @include "includes/slots"

local base, prefix = KEYS[1], ARGV[1]
local key, mode, value = ARGV[2], ARGV[3], tonumber(ARGV[4])
-- a cancelAll's scope record covering the key applies first (includes/scope-records)
settle_scopes(base, prefix, { key })
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
-- its implied `armed` entry (includes/ledger) goes with the row's kept ones: it leaves `armed` (`armed`
-- false: the fold read that `armed` does not hold it)
local _, armed = ledger_fold_armed(row)
ledger_open(row)
bump_version(row)
row.s = 'pending'
row.sa = int(now)
row.d = int(due)
row.tg = nil
row.at, row.cf = nil, nil -- a pending retry is over: the new due is a first try
-- A periodic timer's moved run is no slot (docs/spec.md §3.4): moved to a past due, what follows it counts
-- from now (`cf`), not from that due. `mv` marks it on a row with a slot policy, the rows it changes
-- anything for: claim.lua never passes it as late, a backfill goes back to it without jitter.
if row.k ~= 'once' then
  if has_slot_policy(row) then
    row.mv = '1'
  end
  if due < now then
    row.cf = int(now)
  end
end
-- an explicit due is its own slot; a backfill in progress ends (docs/spec.md §3.3c)
row.ds, row.bf, row.bs, row.ba, row.bt, row.bc = nil, nil, nil, nil, nil, nil
-- The row written in place, the hash save_row would write (~13k Redis instructions less than its DEL
-- and a new hash of every field): an HSET of the fields set above, an HDEL of those dropped (an absent
-- one costs HDEL next to nothing) and of `s` (pending) and `k` (a once) at their defaults, which an older
-- release stored. (Tables sized by their constructors: one grown field by field is rehashed at each
-- power of two.)
local hash = row_key(base, key)
local set, n = { 'v', row.v, 'sa', row.sa, 'd', row.d, false, false, false, false, false, false, false, false, false, false }, 6
-- (set on some rows only: `dm` a delay, `ab` abort_runs, `lq` ledger_fold_armed, `mv` and `cf` a periodic
-- timer's)
for _, field in ipairs({ 'dm', 'ab', 'lq', 'mv', 'cf' }) do
  if row[field] then
    set[n + 1], set[n + 2], n = field, row[field], n + 2
  end
end
redis.call('HSET', hash, unpack(set, 1, n))
local gone, m = { 's', 'tg', 'at', 'ds', 'bf', 'bs', 'ba', 'bt', 'bc', false, false, false }, 9
if not row.cf then
  gone[m + 1], m = 'cf', m + 1
end
if row.k == ROW_DEFAULTS.k then
  gone[m + 1], m = 'k', m + 1
end
if row.k == 'once' and not row.dm then
  gone[m + 1], m = 'dm', m + 1
end
redis.call('HDEL', hash, unpack(gone, 1, m))
arm_due(base, key, due, row.d, armed == false)
-- the event joined from the texts the row holds (includes/events joined_event)
local tail = ',"due":' .. row.d .. ',"reason":"reschedule"'
publish_event(prefix, row, 'scheduled', now, { due = due, reason = 'reschedule' }, row.sa, tail)
return reply('ok', row)
