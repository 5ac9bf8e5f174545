-- Creates (or keeps / replaces) a batch of timers of one partition.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] tombstone ms, ARGV[3] the number g of guard keys, ARGV[4..3+g] the guard
--   keys (ifExists 'error' keys of the same batch sent in other calls: one of them live refuses this call
--   too), then per spec: key, ifExists (error|replace|keep), at (ms, or '' for none), n, then n row-field
--   name/value pairs (encodeSpecFields)
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers as the
--   first did
-- Output: one array per spec — { 'ok', 'id', id, 'sa', sa, 'd', d } for a created row (the caller knows
--   the rest: v 1, pending, its own fields) or { 'kept', row as pairs } — or a single
--   { 'duplicate', 'key', key } / { 'retry', now } when the whole call was refused unchanged.

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/retire"
--- @include "includes/requests"
--- @include "includes/slots"
--- @include "includes/cancel-record"

local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms = tonumber(ARGV[2])
-- the partition's number: base ends '{pN}:' (one node) or '{pN.s}:' (Redis Cluster, keys.ts)
local partition = string.match(base, '{p(%d+)[}.]')
local now = now_ms()
local argc = #ARGV

local guard_count = tonumber(ARGV[3])
local specs = {}
local i = 4 + guard_count
while i <= argc do
  local spec = { key = ARGV[i], ie = ARGV[i + 1], at = tonumber(ARGV[i + 2]), fields = {} }
  local last = i + 3 + 2 * tonumber(ARGV[i + 3])
  for j = i + 4, last, 2 do
    spec.fields[ARGV[j]] = ARGV[j + 1]
  end
  specs[#specs + 1] = spec
  i = last + 1
end

-- First pass: every refusal happens before any write, so a refused call changes nothing.
for g = 4, 3 + guard_count do
  local status = redis.call('HGET', row_key(base, ARGV[g]), 's')
  if status and is_live(status) then
    return { { 'duplicate', 'key', ARGV[g] } }
  end
end
local seen = {}
for _, spec in ipairs(specs) do
  if spec.fields.k == 'cron' and spec.at <= now then
    -- The caller's estimate of Redis now was behind: it recomputes the occurrence after `now`.
    return { { 'retry', int(now) } }
  end
  spec.status = redis.call('HGET', row_key(base, spec.key), 's') -- false: no row
  if spec.ie == 'error' and (seen[spec.key] or (spec.status and is_live(spec.status))) then
    return { { 'duplicate', 'key', spec.key } }
  end
  spec.again = seen[spec.key] -- a key met earlier in this batch: its status above is out of date
  seen[spec.key] = true
end

-- Index writes of new rows are gathered and written once per batch (one command per index, not per row).
local seq_key = base .. 'seq'
local seq = tonumber(redis.call('GET', seq_key) or '0')
local seq_written = seq
local first_due = redis.call('ZRANGE', base .. 'due', 0, 0, 'WITHSCORES')[2]
local earliest = nil
local due_entries, key_entries, id_entries, tombstones = {}, {}, {}, {}

local function write_gathered()
  call_in_slices('ZADD', base .. 'due', due_entries)
  call_in_slices('ZADD', base .. 'keys', key_entries)
  call_in_slices('HSET', base .. 'ids', id_entries)
  drop_tombstones(tombstones)
  ledger_write_created()
  if seq ~= seq_written then
    redis.call('SET', seq_key, int(seq))
    seq_written = seq
  end
  due_entries, key_entries, id_entries, tombstones = {}, {}, {}, {}
end

local function due_of(spec)
  local fields = spec.fields
  if fields.k == 'interval' and fields.st then
    -- startAt: the first grid slot not before it (core firstSlot)
    return next_grid_slot({ sa = now, em = fields.em }, math.max(now, tonumber(fields.st) - 1))
  elseif fields.k == 'interval' then
    return now + tonumber(fields.em)
  elseif fields.dm then
    return now + tonumber(fields.dm)
  end
  return spec.at -- once-at or cron; a past `at` stays as is and is due at once (core firstDue)
end

local function create(spec)
  local key, slot = spec.key, due_of(spec)
  -- a periodic slot is due moved by its jitter (includes/slots); `ds` keeps the slot
  local due = spec.fields.k == 'once' and slot or slot_due({ key = key, jt = spec.fields.jt }, slot)
  seq = seq + 1
  local id, sa, d = int(seq) .. 'p' .. partition, int(now), int(due)
  local hash = row_key(base, key)
  if spec.status then
    redis.call('DEL', hash) -- a finished row kept under this key (a replaced one is gone already)
  end
  local values = { 'id', id, 'v', '1', 's', 'pending', 'sa', sa, 'd', d }
  if due ~= slot then
    values[#values + 1] = 'ds'
    values[#values + 1] = int(slot)
  end
  for field, value in pairs(spec.fields) do
    values[#values + 1] = field
    values[#values + 1] = value
  end
  redis.call('HSET', hash, unpack(values))
  due_entries[#due_entries + 1] = d
  due_entries[#due_entries + 1] = key
  key_entries[#key_entries + 1] = 0
  key_entries[#key_entries + 1] = key
  id_entries[#id_entries + 1] = id
  id_entries[#id_entries + 1] = key
  tombstones[#tombstones + 1] = key
  if earliest == nil or due < earliest then
    earliest = due
  end
  publish_event(prefix, { id = id, key = key, v = '1', k = spec.fields.k }, 'scheduled', now, { due = due })
  return { 'ok', 'id', id, 'sa', sa, 'd', d }
end

local function schedule_one(spec)
  if spec.again then
    write_gathered()
    spec.status = redis.call('HGET', row_key(base, spec.key), 's')
  end
  if spec.status and is_live(spec.status) then
    if spec.ie == 'keep' then
      return reply('kept', read_row(base, spec.key))
    end
    cancel_row(base, prefix, read_row(base, spec.key), 'replaced', now, 0)
  elseif spec.ie == 'keep' then
    -- A cancelled name stays cancelled while its tombstone lives.
    local cancelled = read_tombstone(base, spec.key)
    if cancelled then
      return reply('kept', cancelled)
    end
  end
  return create(spec)
end

local replies = {}
for n, spec in ipairs(specs) do
  replies[n] = schedule_one(spec)
end
write_gathered()
-- Wake the dispatchers once when this batch holds a due earlier than everything `due` held.
if earliest and (first_due == nil or earliest < tonumber(first_due)) then
  redis.call('PUBLISH', base .. 'wake', int(earliest))
end
return replies
