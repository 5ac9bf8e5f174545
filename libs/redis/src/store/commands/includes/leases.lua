-- Include: Lease expiries of held and free runs (docs/design.md "Leases", "Free runs").
--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/free-runs"

-- Sets the lease expiry `lu` of the runs a worker still holds: (key, runCount) pairs from ARGV[first]
-- on, held when the row is running under `worker` with that runCount as its held run's (a free run:
-- `<key>|<version>`, held when its record names `worker` and that runCount). One ZADD into `leases`.
-- Returns one flag per run (1 held and set, 0 no longer this worker's) and how many were set.
local function set_held_leases(base, worker, first, lease_until)
  local lease_text = int(lease_until)
  local flags, leases = {}, {}
  for i = first, #ARGV, 2 do
    local key, run_count = ARGV[i], ARGV[i + 1]
    local held
    if split_free_member(key) then
      local run = read_free_run(base, key)
      held = run ~= nil and run.w == worker and run.rc == run_count
    else
      -- the held run's own runCount (`hc`; `rc` on a row claimed before it existed): see claim.lua
      local row = redis.call('HMGET', row_key(base, key), 's', 'lw', 'hc', 'rc')
      held = row[1] == 'running' and row[2] == worker and (row[3] or row[4]) == run_count
      if held then
        redis.call('HSET', row_key(base, key), 'lu', lease_text)
      end
    end
    if held then
      leases[#leases + 1] = lease_text
      leases[#leases + 1] = key
    end
    flags[#flags + 1] = held and 1 or 0
  end
  call_in_slices('ZADD', base .. 'leases', leases)
  return flags, #leases / 2
end
