-- Graceful stop: expires at once the leases of a runner's held runs that did not finish in time, so the
-- next `reconcile` settles them (at-least-once: run again; at-most-once: lost). ARGV[2] runner id, then
-- (key, runCount) per run; a run no longer held by this runner is left alone. Replies the count expired.
local _, expired = set_held_leases(KEYS[1], ARGV[2], 3, now_ms())
return expired
