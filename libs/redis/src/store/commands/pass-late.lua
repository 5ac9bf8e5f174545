-- Passes a late slot that a slot policy does not run (docs/spec.md §3.3c; the worker asked core lateSlot
-- after claim.lua answered 'check'): the slots are counted missed, and the slot the policy picks is armed
-- (moved by its jitter) under the next version, or the timer ends with the reason. Version-guarded: run
-- twice, the second finds the version moved and changes nothing.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] id, ARGV[3] key, ARGV[4] version, ARGV[5] the slot to arm ('' when
--   none: the timer ends), ARGV[6] why it ends ('ended' | 'no-next-slot'), ARGV[7] slots missed
-- Output: { 'done' } | { 'stale' } (the row is not that pending version any more: nothing written)
-- Ledger (includes/ledger, through publish_event): the passed slots are one 'skipped' entry; an end is
-- its 'completed' | 'failed' entry with the reason.

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/free-runs"
--- @include "includes/slots"
--- @include "includes/slot-ends"

local base, prefix = KEYS[1], ARGV[1]
local id, key, version, next_slot, ended = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local missed = tonumber(ARGV[7])
local row = read_row(base, key)
if not row or row.id ~= id or row.v ~= version or row.s ~= 'pending' then
  return { 'stale' }
end
local now = now_ms()
-- its implied `armed` entry (includes/ledger) goes with the row's kept ones: it leaves `armed`
local folded = ledger_fold_armed(row)
publish_skips(prefix, row, now, version, missed, 0)
local hash = row_key(base, key)
if next_slot ~= '' then
  local fields = { v = int(tonumber(row.v) + 1) }
  if folded and row.lq then
    fields.lq = row.lq -- (no skip wrote it)
  end
  local due = arm_slot_fields(row, fields, tonumber(next_slot))
  redis.call('HSET', hash, unpack(flat(fields)))
  arm_due(base, key, due)
  return { 'done' }
end
-- No slot to arm: the timer ends as its last run did (completed when it never ran), and says why.
end_without_slot(base, prefix, row, now, ended)
return { 'done' }
