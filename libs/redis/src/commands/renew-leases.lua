-- Extends the leases of one runner's held runs (docs/design.md "Leases"): ARGV[2] leaseMs, ARGV[3]
-- runner id, then (key, runCount) per run. Replies one flag per run: 1 still held (renewed), 0 gone
-- (finished, reclaimed by another runner after expiry, settled lost or cancelled): the run should abort.
local renewed = set_held_leases(KEYS[1], ARGV[3], 4, now_ms() + tonumber(ARGV[2]))
return renewed
