-- Extends the leases of one runner's held runs (docs/design.md "Leases"): ARGV[2] leaseMs, ARGV[3]
-- runner id, then (key, runCount) per run. Replies one flag per run: 1 still held (renewed), 0 gone
-- (finished, reclaimed by another runner after expiry, settled lost or cancelled): the run should abort.
local base = KEYS[1]
local lease_ms, worker = tonumber(ARGV[2]), ARGV[3]
local lease_until = now_ms() + lease_ms

local lease_text = int(lease_until)
local replies, leases = {}, {}
for i = 4, #ARGV, 2 do
  local key, run_count = ARGV[i], ARGV[i + 1]
  local row = redis.call('HMGET', row_key(base, key), 's', 'lw', 'rc')
  if row[1] == 'running' and row[2] == worker and row[3] == run_count then
    redis.call('HSET', row_key(base, key), 'lu', lease_text)
    leases[#leases + 1] = lease_text
    leases[#leases + 1] = key
    replies[#replies + 1] = 1
  else
    replies[#replies + 1] = 0
  end
end
-- One ZADD for every renewed lease.
call_in_slices('ZADD', base .. 'leases', leases)
return replies
