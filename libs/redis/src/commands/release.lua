-- Graceful stop: expires at once the leases of a runner's held runs that did not finish in time, so the
-- next `reconcile` settles them (at-least-once: run again; at-most-once: lost). ARGV[2] runner id, then
-- (key, runCount) per run; a run no longer held by this runner is left alone. Replies the count expired.
local base = KEYS[1]
local worker = ARGV[2]
local now = now_ms()

local now_text = int(now)
local leases = {}
for i = 3, #ARGV, 2 do
  local key, run_count = ARGV[i], ARGV[i + 1]
  local row = redis.call('HMGET', row_key(base, key), 's', 'lw', 'rc')
  if row[1] == 'running' and row[2] == worker and row[3] == run_count then
    redis.call('HSET', row_key(base, key), 'lu', now_text)
    leases[#leases + 1] = now_text
    leases[#leases + 1] = key
  end
end
-- One ZADD for every expired lease.
call_in_slices('ZADD', base .. 'leases', leases)
return #leases / 2
