-- Extends the leases of one worker's held runs (docs/design.md "Leases").
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] leaseMs, ARGV[3] worker id, then (key, runCount) per run
-- Output: one flag per run: 1 still held (renewed), 0 gone (finished, reclaimed by another worker after
--   expiry, settled lost or cancelled): the run should abort.

--- @include "includes/time"
--- @include "includes/leases"

local renewed = set_held_leases(KEYS[1], ARGV[3], 4, now_ms() + tonumber(ARGV[2]))
return renewed
