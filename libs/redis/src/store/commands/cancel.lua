-- Cancels one timer.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] tombstone ms, ARGV[3] key
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`
-- Output: 1 when a live timer was cancelled; a finished row kept by removeOnComplete=false is removed,
--   not counted: its status, 'completed' or 'failed' (a release before this one answered 0 and reads
--   the text as not 1: false, as it answered); 0 when there is no row.

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/retire"
--- @include "includes/requests"
--- @include "includes/scope-records"

local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms, key = tonumber(ARGV[2]), ARGV[3]
-- a cancelAll's scope record covering the key applies first (includes/scope-records)
settle_scopes(base, prefix, { key })
local row = read_row(base, key)
if not row then
  return 0
end
if not is_live(row.s) then
  drop_finished(base, key)
  return row.s
end
cancel_row(base, prefix, row, 'cancelled', now_ms(), tombstone_ms)
return 1
