-- Graceful stop: expires at once the leases of a worker's held runs that did not finish in time, so the
-- next `reconcile` settles them (at-least-once: run again; at-most-once: lost). A run no longer held by
-- this worker is left alone.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] worker id, then (key, runCount) per run
-- Output: the number of leases expired

--- @include "includes/time"
--- @include "includes/leases"

local _, expired = set_held_leases(KEYS[1], ARGV[2], 3, now_ms(), '')
return expired
