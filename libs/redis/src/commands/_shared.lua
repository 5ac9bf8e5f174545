-- Helpers shared by every Sundial command; the loader (scripts.ts) prepends this file.
-- Contract: KEYS[1] = partition base 'P:{pN}:', ARGV[1] = prefix 'P' (docs/design.md).

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integer to string without exponent notation (tostring(1.7e12) would give '1.7e+12').
local function int(n)
  return string.format('%.0f', n)
end

local function row_key(base, key)
  return base .. 't:' .. key
end

local function tombstone_key(base, key)
  return base .. 'x:' .. key
end

local function is_live(status)
  return status == 'pending' or status == 'running' or status == 'paused'
end

-- A row hash (`name`) as a field → value table, or nil when there is none. The hash does not store its
-- key (the hash's name holds it: 25 bytes less per timer); the table gets it as `key`.
local function read_hash(name, key)
  local pairs_ = redis.call('HGETALL', name)
  if #pairs_ == 0 then
    return nil
  end
  local row = { key = key }
  for i = 1, #pairs_, 2 do
    row[pairs_[i]] = pairs_[i + 1]
  end
  return row
end

local function read_row(base, key)
  return read_hash(row_key(base, key), key)
end

-- A row table as an HGETALL-style array (what replies carry and HSET takes).
local function flat(row)
  local out = {}
  for field, value in pairs(row) do
    out[#out + 1] = field
    out[#out + 1] = value
  end
  return out
end

-- Replaces the whole hash (all fields but `key`), so fields set to nil in the table disappear.
local function save_row(base, row)
  local hash = row_key(base, row.key)
  local fields = {}
  for field, value in pairs(row) do
    if field ~= 'key' then
      fields[#fields + 1] = field
      fields[#fields + 1] = value
    end
  end
  redis.call('DEL', hash)
  redis.call('HSET', hash, unpack(fields))
end

local function bump_version(row)
  row.v = int(tonumber(row.v) + 1)
end

local function reply(code, row)
  return { code, unpack(flat(row)) }
end

-- The row an operation on `key` works on (pause, resume, trigger, reschedule), or nil and the reply that
-- refuses it: 'not-found' when no live row holds the key, 'inactive' (with the row) when its status is
-- one of `inactive_when` (a set: { running = true }).
local function live_row_for(base, key, inactive_when)
  local row = read_row(base, key)
  if not row or not is_live(row.s) then
    return nil, { 'not-found' }
  end
  if inactive_when[row.s] then
    return nil, reply('inactive', row)
  end
  return row
end

-- Arming intent: the key waits in `due` (never in `armed` at the same time) until the dispatcher takes
-- it; a score below everything `due` held wakes the dispatchers on `P:{pN}:wake` (docs/design.md).
local function arm_due(base, key, score)
  local due_key = base .. 'due'
  local first = redis.call('ZRANGE', due_key, 0, 0, 'WITHSCORES')
  redis.call('ZREM', base .. 'armed', key)
  redis.call('ZADD', due_key, score, key)
  if #first == 0 or score < tonumber(first[2]) then
    redis.call('PUBLISH', base .. 'wake', int(score))
  end
end

-- Whether anyone may listen on `P:events`, asked once per script call (both O(1)): with no subscriber
-- of the channel and no pattern subscription at all there is no one to encode an event for.
-- Subscribers of a replica or of another Redis Cluster node are not counted (Sundial subscribes on the
-- primary it writes to).
local event_listeners = nil

local function publish_event(prefix, row, event_type, now, extra)
  local channel = prefix .. ':events'
  if event_listeners == nil then
    event_listeners = redis.call('PUBSUB', 'NUMSUB', channel)[2] + redis.call('PUBSUB', 'NUMPAT')
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

-- Runs `command [target] ...items` in slices: one call per slice instead of one per item, and never
-- more arguments than Lua's unpack takes (about 8000). The slice is even, so score/member pairs stay
-- together. `target` nil: the items are the command's only arguments (DEL of many keys).
local function call_in_slices(command, target, items)
  local slice = 2000
  for first = 1, #items, slice do
    local last = math.min(first + slice - 1, #items)
    if target then
      redis.call(command, target, unpack(items, first, last))
    else
      redis.call(command, unpack(items, first, last))
    end
  end
end

-- A finished row kept by removeOnComplete=false: cancel/cancelAll just drop it (not counted, no event).
local function drop_finished(base, key)
  redis.call('DEL', row_key(base, key))
  redis.call('ZREM', base .. 'keys', key)
end

-- A run in progress must abort when its entry changes under it: a held run (`running`) or a free run
-- of an awaitTask=false interval (row stays pending, `rv` set). Call before the version bump.
local function abort_runs(prefix, row)
  if row.s == 'running' or (row.aw == '0' and row.rv) then
    redis.call('PUBLISH', prefix .. ':abort', cjson.encode({ key = row.key, id = row.id, version = tonumber(row.v) }))
  end
end

-- The row of a cancelled timer becomes its tombstone (docs/design.md): the hash is renamed as it was
-- (O(1): nothing encoded, nothing rewritten; `read_tombstone` applies the cancel). With tombstone_ms 0
-- it just goes.
local function bury_row(base, row, tombstone_ms)
  local hash = row_key(base, row.key)
  if tombstone_ms > 0 then
    local tombstone = tombstone_key(base, row.key)
    redis.call('RENAME', hash, tombstone)
    redis.call('PEXPIRE', tombstone, tombstone_ms)
  else
    redis.call('DEL', hash)
  end
end

-- The cancelled row a tombstone stands for (its hash holds the row from before the cancel), or nil.
local function read_tombstone(base, key)
  local row = read_hash(tombstone_key(base, key), key)
  if row then
    bump_version(row)
    row.s = 'cancelled'
  end
  return row
end

-- The live row's part of a cancel, without its index entries (cancel-all removes those per batch):
-- abort a run in progress, bump version, `s = cancelled`, bury the row, emit `cancelled` with `reason`.
-- `row` needs id, key, v, s, k, aw, rv.
local function retire_row(base, prefix, row, reason, now, tombstone_ms)
  abort_runs(prefix, row)
  bump_version(row)
  row.s = 'cancelled'
  bury_row(base, row, tombstone_ms)
  publish_event(prefix, row, 'cancelled', now, { reason = reason })
end

-- Cancels a live row: retire it (above) and remove its index entries; leaves a tombstone unless
-- tombstone_ms is 0, as on replace, where the new row follows at once.
local function cancel_row(base, prefix, row, reason, now, tombstone_ms)
  local key = row.key
  redis.call('ZREM', base .. 'due', key)
  redis.call('ZREM', base .. 'armed', key)
  redis.call('ZREM', base .. 'keys', key)
  redis.call('ZREM', base .. 'leases', key)
  redis.call('HDEL', base .. 'ids', row.id)
  retire_row(base, prefix, row, reason, now, tombstone_ms)
end

-- An interval's next due: the first grid slot anchor + k·every strictly after now, k ≥ 1 (the same
-- math as core nextGridSlot). Used by resume and by the fire path (claim of a free run, complete).
local function next_grid_slot(row, now)
  local anchor, every = tonumber(row.sa), tonumber(row.em)
  local k = math.max(1, math.floor((now - anchor) / every) + 1)
  return anchor + k * every
end

-- Sets the lease expiry `lu` of the runs a runner still holds: (key, runCount) pairs from ARGV[first]
-- on, held when the row is running under `worker` with that runCount. One ZADD into `leases` for all.
-- Returns one flag per run (1 held and set, 0 no longer this runner's) and how many were set.
local function set_held_leases(base, worker, first, lease_until)
  local lease_text = int(lease_until)
  local flags, leases = {}, {}
  for i = first, #ARGV, 2 do
    local key, run_count = ARGV[i], ARGV[i + 1]
    local row = redis.call('HMGET', row_key(base, key), 's', 'lw', 'rc')
    local held = row[1] == 'running' and row[2] == worker and row[3] == run_count
    if held then
      redis.call('HSET', row_key(base, key), 'lu', lease_text)
      leases[#leases + 1] = lease_text
      leases[#leases + 1] = key
    end
    flags[#flags + 1] = held and 1 or 0
  end
  call_in_slices('ZADD', base .. 'leases', leases)
  return flags, #leases / 2
end
