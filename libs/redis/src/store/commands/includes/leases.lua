-- Include: Lease expiries of held and free runs (docs/design.md "Leases", "Free runs").
--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/free-runs"

-- Whether the free run `member` (record `run`) was to be aborted: its timer went (cancelled, or replaced:
-- another id; or, ended, its key was scheduled anew, which publishes nothing but leaves the run nothing to
-- complete: complete.lua answers it stale 'gone'), or a pause or reschedule aborted its version (`ab`,
-- includes/events `abort_runs`). The `P:abort` message says so at once; this is for a worker that missed
-- it (its subscriber reconnecting).
local function free_run_aborted(base, member, run)
  local key, version = split_free_member(member)
  local row = redis.call('HMGET', row_key(base, key), 'id', 'ab')
  return row[1] ~= run.id or (row[2] and tonumber(version) <= tonumber(row[2]))
end

-- Sets the lease expiry `lu` of the runs a worker still holds: (key, runCount) pairs from ARGV[first]
-- on, held when the row is running under `worker` with that runCount as its held run's (a free run:
-- `<key>|<version>`, held when its record names `worker` and that runCount). One ZADD into `leases`.
-- Returns one flag per run (1 held and set, 2 a free run held and set that was aborted: it ends as an
-- aborted run does, keeping its lease until it completes; 0 no longer this worker's) and how many were set.
-- `mark` ('.5' from a renewal, else ''): goes after the `leases` score (not `lu`), so a renewed run's
-- completion reads its row (includes/one-shot-rows: the worker knows only its claim's lease end). A
-- release expires its leases at once: unmarked, as a mark would keep them 0.5 ms from its reconcile.
local function set_held_leases(base, worker, first, lease_until, mark)
  local lease_text = int(lease_until)
  local score = lease_text .. mark
  local flags, leases = {}, {}
  for i = first, #ARGV, 2 do
    local key, run_count = ARGV[i], ARGV[i + 1]
    local held, aborted
    if split_free_member(key) then
      local run = read_free_run(base, key)
      held = run ~= nil and run.w == worker and run.rc == run_count
      aborted = held and free_run_aborted(base, key, run)
    else
      -- the held run's own runCount (`hc`; `rc` on a row claimed before it existed): see claim.lua
      local row = redis.call('HMGET', row_key(base, key), 's', 'lw', 'hc', 'rc')
      held = row[1] == 'running' and row[2] == worker and (row[3] or row[4]) == run_count
      if held then
        redis.call('HSET', row_key(base, key), 'lu', lease_text)
      end
    end
    if held then
      leases[#leases + 1] = score
      leases[#leases + 1] = key
    end
    flags[#flags + 1] = aborted and 2 or held and 1 or 0
  end
  call_in_slices('ZADD', base .. 'leases', leases)
  return flags, #leases / 2
end
