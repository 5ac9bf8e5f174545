-- Extends the leases of one worker's held runs (docs/design.md "Leases").
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] leaseMs, ARGV[3] worker id, then (key, runCount) per run
-- Output: one flag per run: 1 still held (renewed), 0 gone (finished, reclaimed by another worker after
--   expiry, settled lost or cancelled): the run should abort; 2 a free run still held (renewed) whose
--   timer was cancelled, replaced, paused or rescheduled: the run should abort (its `P:abort` message
--   may have been missed) and complete as usual. Each runner sends its own release's script, so one of the
--   release before (which reads only 0 and 1) never gets a 2.

--- @include "includes/time"
--- @include "includes/leases"

local renewed = set_held_leases(KEYS[1], ARGV[3], 4, now_ms() + tonumber(ARGV[2]), '.5')
return renewed
