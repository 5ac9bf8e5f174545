-- Graceful stop: expires at once the leases of a worker's held runs that did not finish in time, so the
-- next `reconcile` settles them (at-least-once: run again; at-most-once: lost). A run no longer held by
-- this worker is left alone. Runs that never started (claimed ahead of a due the grace ended before, or
-- claimed as it ended) are marked `hb` = their runCount (a free run: on its record): an at-most-once one
-- is then put back to run again too (reconcile.lua), since its handler never ran. A reconcile of a release before this one reads
-- no `hb` and records it lost, as before; a later claim's runCount no longer matches a mark left behind.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] worker id, ARGV[3] '1' when these runs never started (else ''), then
--   (key, runCount) per run
-- Output: the number of leases expired

--- @include "includes/time"
--- @include "includes/leases"

local flags, expired = set_held_leases(KEYS[1], ARGV[2], 4, now_ms(), '')
if ARGV[3] == '1' then
  for i, flag in ipairs(flags) do
    local key, run_count = ARGV[2 + 2 * i], ARGV[3 + 2 * i]
    if flag == 0 then
      -- no longer this worker's: left alone
    elseif split_free_member(key) then
      -- a free run's mark is on its record (includes/free-runs), which a release before keeps as it is
      local run = read_free_run(KEYS[1], key)
      run.hb = run_count
      save_free_run(KEYS[1], key, run)
    else
      redis.call('HSET', row_key(KEYS[1], key), 'hb', run_count)
    end
  end
end
return expired
