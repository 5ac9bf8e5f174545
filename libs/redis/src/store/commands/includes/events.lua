-- Include: What a script tells the world: `P:events` (docs/spec.md §3.6) and `P:abort` (runs to stop).
-- Every event is also the timer's ledger entry (includes/ledger).
--- @include "includes/ledger"

-- Whether anyone may listen on `P:events`, asked once per script call (both O(1)): with no subscriber
-- of the channel and no pattern subscription at all there is no one to encode an event for.
-- Subscribers of a replica are not counted (Sundial subscribes on the primary it writes to). On a Redis
-- Cluster NUMSUB counts this node's subscribers only, while PUBLISH reaches every node's: there the
-- script always publishes. (`INFO cluster` is asked only when this node has no listener: once per call.)
local event_listeners = nil

local function publish_event(prefix, row, event_type, now, extra)
  ledger_record(row, event_type, now, extra)
  local channel = prefix .. ':events'
  if event_listeners == nil then
    event_listeners = redis.call('PUBSUB', 'NUMSUB', channel)[2] + redis.call('PUBSUB', 'NUMPAT')
    if event_listeners == 0 and string.find(redis.call('INFO', 'cluster'), 'cluster_enabled:1', 1, true) then
      event_listeners = 1
    end
  end
  if event_listeners == 0 then
    return
  end
  local event = { type = event_type, id = row.id, key = row.key, version = tonumber(row.v), kind = row.k, at = now }
  for field, value in pairs(extra or {}) do
    event[field] = value
  end
  redis.call('PUBLISH', channel, cjson.encode(event))
end

-- A run in progress must abort when its entry changes under it: a held run (`running`) or a free run
-- of an awaitTask=false interval (row stays pending, `rv` set). Call before the version bump.
local function abort_runs(prefix, row)
  if row.s == 'running' or (row.aw == '0' and row.rv) then
    redis.call('PUBLISH', prefix .. ':abort', cjson.encode({ key = row.key, id = row.id, version = tonumber(row.v) }))
  end
end

-- The `skipped` events of a periodic run (docs/spec.md §3.3): one per reason that has slots, with their count.
local function publish_skips(prefix, row, now, version, missed, overlap)
  if missed > 0 then
    publish_event(prefix, row, 'skipped', now, { version = tonumber(version), reason = 'missed', count = missed })
  end
  if overlap > 0 then
    publish_event(prefix, row, 'skipped', now, { version = tonumber(version), reason = 'overlap', count = overlap })
  end
end
