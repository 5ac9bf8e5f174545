-- Include: Free runs (docs/design.md "Free runs"): the run of an awaitTask=false tick keeps the row
-- pending (the next tick is armed at claim), so its lease lives beside the row: member `<key>|<version>`
-- (keys never hold '|') of `leases`, scored by its lease expiry like a held run's key, and a record in the
-- hash `P:{pN}:free` under the same name: JSON { id, w (worker, '' once handed back for a re-run), t
-- (claim token), rc (its runCount), due, lf (started), j (jobId of a re-run's fire job), r ('1' once
-- claimed for a re-run) }. It goes when the run completes or is settled lost; an at-least-once run whose
-- worker died is re-armed into `due` under its member and claimed again like any timer. A timer that ends
-- while free runs of it are in flight keeps its row until they end (`rp` = '1' when removeOnComplete:
-- complete.lua removes it with the last), so a dead worker's run still has a row to run again from.

--- @include "includes/time"

local function free_member(key, version)
  return key .. '|' .. version
end

-- `<key>|<version>` → key, version; nil for a plain key.
local function split_free_member(member)
  return string.match(member, '^(.*)|(%d+)$')
end

local function read_free_run(base, member)
  local text = redis.call('HGET', base .. 'free', member)
  return text and cjson.decode(text) or nil
end

local function save_free_run(base, member, run)
  redis.call('HSET', base .. 'free', member, cjson.encode(run))
end

-- The run is over (completed, settled lost, or its timer gone): record and lease go.
local function drop_free_run(base, member)
  redis.call('HDEL', base .. 'free', member)
  redis.call('ZREM', base .. 'leases', member)
end

-- Whether a free run of timer `id` under `key` is in flight: a look through the names in `free` (HKEYS:
-- no glob to escape, and a command the documented ACL user has). Made only when an awaitTask=false timer
-- ends or a free run of a row kept for them ends, so rarely; `free` holds only the runs in flight.
local function has_free_runs(base, key, id)
  local head = key .. '|'
  for _, member in ipairs(redis.call('HKEYS', base .. 'free')) do
    if string.sub(member, 1, #head) == head and split_free_member(member) == key then
      local run = read_free_run(base, member)
      if run and run.id == id then
        return true
      end
    end
  end
  return false
end

-- A free run: an awaitTask=false interval arms its next tick at claim and keeps ticking while this run
-- goes on; a trigger run and the run that reaches maxRuns are held like any other.
local function is_free(row, run_count, start)
  return row.s == 'pending' and row.k == 'interval' and row.aw == '0' and not row.tg
    and (not row.mr or run_count < tonumber(row.mr))
    and not row.bf and not (row.ea and next_grid_slot(row, start) > tonumber(row.ea))
end
