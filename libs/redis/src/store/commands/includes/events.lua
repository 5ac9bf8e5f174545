-- Include: What a script tells the world: `P:events` (docs/spec.md §3.6) and `P:abort` (runs to stop).
-- Every event is also the timer's ledger entry (includes/ledger).
--- @include "includes/ledger"

-- Whether anyone listens on `P:events`, learnt from the call's first event at no extra command: PUBLISH
-- answers how many clients received it (channel and pattern subscribers alike), and while a script runs
-- no one can subscribe. When the first reached no one, the call's later events are not even encoded.
-- Subscribers of a replica are not counted (Sundial subscribes on the primary it writes to). On a Redis
-- Cluster PUBLISH counts this node's receivers only while it reaches every node's: there every event is
-- published. Whether this is a Cluster is read from the call's own key, never asked of the server (an
-- `INFO` per call was the cost of every hot path): the partition's hash tag is `{pN.s}` on a Cluster
-- and `{pN}` on one node (store/keys.ts, chosen by the connection kind).
--- @per-call: learnt from this call's first event (a subscriber may come between two calls)
local event_listeners = nil
--- @per-call: read from this call's key (processes of two kinds may share one Redis)
local on_cluster = string.find(KEYS[1], '{p%d+%.%d+}:$') ~= nil

-- A string as JSON: as it is between quotes when it needs no escape (an id, most keys), else cjson's.
local function json_string(text)
  if string.find(text, '^[%w%.:_%-]*$') then
    return '"' .. text .. '"'
  end
  return cjson.encode(text)
end

-- An event whose numbers are texts the script holds: `at_text` its `at`, `tail` its extra fields as JSON
-- after a comma (',"due":<ms>,"reason":"reschedule"'). The same JSON as cjson.encode of the event's table
-- (field order is not part of it) without a table or a print of each number (~3k instructions apiece);
-- `row.v` is the version's digits, `row.k` a kind's name.
local function joined_event(row, event_type, at_text, tail)
  return '{"type":"' .. event_type .. '","id":' .. json_string(row.id) .. ',"key":' .. json_string(row.key)
    .. ',"version":' .. row.v .. ',"kind":"' .. row.k .. '","at":' .. at_text .. tail .. '}'
end

-- Publishes an event without its ledger entry (a held claim keeps that on the row: includes/ledger). With
-- `at_text` (and `tail`: joined_event) the event is joined from those texts instead of encoded.
local function announce_event(prefix, row, event_type, now, extra, at_text, tail)
  if event_listeners == 0 then
    return
  end
  local text
  if at_text then
    text = joined_event(row, event_type, at_text, tail)
  else
    local event = { type = event_type, id = row.id, key = row.key, version = tonumber(row.v), kind = row.k, at = now }
    for field, value in pairs(extra or {}) do
      event[field] = value
    end
    text = cjson.encode(event)
  end
  local received = redis.call('PUBLISH', prefix .. ':events', text)
  if event_listeners == nil then
    event_listeners = on_cluster and 1 or received
  end
end

local function publish_event(prefix, row, event_type, now, extra, at_text, tail)
  ledger_record(row, event_type, now, extra)
  announce_event(prefix, row, event_type, now, extra, at_text, tail)
end

-- A dead worker's at-least-once run put back to run again (docs/spec.md §3.6, §3.8), by the reconciler or
-- by the claim that takes it over: its `requeued` event (the run's version and due, the worker whose lease
-- ran out) and its ledger entry, `lost` with reason 'requeued' — appended to the list, or with `defer`
-- kept on the row before the claim's own entry (the row's `lq` to write is returned).
local function record_requeue(prefix, row, now, version, worker, due, defer)
  announce_event(prefix, row, 'requeued', now, { version = tonumber(version), workerId = worker, due = tonumber(due) })
  local fields = { r = 'requeued', w = worker }
  if defer then
    return ledger_defer(row, ledger_entry(now, 'lost', version, fields))
  end
  ledger_append(row, 'lost', now, fields, version)
end

-- A stale ref's event (`subject`: its row, or its id and key when the key holds none of its timer).
-- `other`: the key's row of a later timer (a gone ref's): the entry goes into that row's ledger after
-- the entries the row keeps (`lq`, its implied `armed`), which happened before it — as a list write
-- alone would put it under them — while the event names the ref's timer.
local function publish_stale(prefix, subject, other, now, extra)
  if other then
    ledger_record(other, 'stale', now, extra)
    if LEDGER_SIZE > 0 and other.v == '1' and not other.rc and not other.lo then
      -- the list holds its `scheduled` entry now: a hand-off must not keep it again (ledger_hand_off)
      redis.call('HSET', KEYS[1] .. 't:' .. other.key, 'lo', '1')
    end
    return announce_event(prefix, subject, 'stale', now, extra)
  end
  publish_event(prefix, subject, 'stale', now, extra)
end

-- A run in progress must abort when its entry changes under it: a held run (`running`) or a free run
-- of an awaitTask=false interval (row stays pending, `rv` set). Call before the version bump. A free run's
-- lease outlives a pause or reschedule, so `ab` (the versions aborted: up to this one) stays on the row
-- for its renewal to find should the message be missed (includes/leases); the caller saves the row.
local function abort_runs(prefix, row)
  if row.s == 'running' or (row.aw == '0' and row.rv) then
    redis.call('PUBLISH', prefix .. ':abort', cjson.encode({ key = row.key, id = row.id, version = tonumber(row.v) }))
  end
  if row.aw == '0' and row.rv then
    row.ab = row.v
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
