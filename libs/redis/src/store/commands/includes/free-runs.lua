-- Include: Free runs (docs/design.md "Free runs"): the run of an awaitTask=false tick keeps the row
-- pending (the next tick is armed at claim), so its lease lives beside the row: member `<key>|<version>`
-- (keys never hold '|') of `leases`, scored by its lease expiry like a held run's key, and a record in the
-- hash `P:{pN}:free` under the same name: JSON { id, w (worker, '' once handed back for a re-run), t
-- (claim token), rc (its runCount), due, lf (started), j (jobId of a re-run's fire job), r ('1' once
-- claimed for a re-run) }. It goes when the run completes or is settled lost; an at-least-once run whose
-- worker died is re-armed into `due` under its member and claimed again like any timer.

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
