-- Creates (or keeps / replaces) a batch of timers of one partition.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] tombstone ms, ARGV[3] the number g of guard keys, ARGV[4..3+g] the guard
--   keys (ifExists 'error' keys of the same batch sent in other calls: one of them live refuses this call
--   too), then per spec: key, ifExists (error|replace|keep), at (ms, or '' for none), n, then n row-field
--   name/value pairs (encodeSpecFields)
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers as the
--   first did
-- Output: { 'ok', sa, first id's seq, then per spec its due (a number) for a created row or
--   { 'kept', row as pairs } }: the created rows' ids are consecutive seqs from the first one (the caller
--   knows the rest of them: `sa` shared, v 1, pending, its own fields). Or { 'duplicate', key } /
--   { 'retry', now } when the whole call was refused unchanged.

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

-- Whether each key holds a row, and its status: a row exists iff its key is in the key index (docs/design.md
-- "Index membership"), so a ZMSCORE per chunk answers for a whole batch of new keys and only a row that
-- exists is read (its `id` tells a row from none, `s` may be left out). `key → status` (false: no row).
local function statuses_of(keys)
  local found = {}
  for first = 1, #keys, 2000 do
    local last = math.min(first + 1999, #keys)
    local indexed = key_index_has(base, { unpack(keys, first, last) })
    for j = first, last do
      local row = indexed[keys[j]] and redis.call('HMGET', row_key(base, keys[j]), 'id', 's')
      found[keys[j]] = row and row[1] and (row[2] or ROW_DEFAULTS.s)
    end
  end
  return found
end

-- First pass: every refusal happens before any write, so a refused call changes nothing.
local guards = {}
for g = 4, 3 + guard_count do
  guards[#guards + 1] = ARGV[g]
end
for key, status in pairs(statuses_of(guards)) do
  if status and is_live(status) then
    return { 'duplicate', key }
  end
end
local spec_keys = {}
for n, spec in ipairs(specs) do
  spec_keys[n] = spec.key
end
local status_of = statuses_of(spec_keys)
local seen = {}
for _, spec in ipairs(specs) do
  if spec.fields.k == 'cron' and spec.at <= now then
    -- The caller's estimate of Redis now was behind: it recomputes the occurrence after `now`.
    return { 'retry', now }
  end
  spec.status = status_of[spec.key]
  if spec.ie == 'error' and (seen[spec.key] or (spec.status and is_live(spec.status))) then
    return { 'duplicate', spec.key }
  end
  spec.again = seen[spec.key] -- a key met earlier in this batch: its status above is out of date
  seen[spec.key] = true
end

-- Index writes of new rows are gathered and written once per batch (one command per index, not per row).
local seq_key = base .. 'seq'
local seq = tonumber(redis.call('GET', seq_key) or '0')
local seq_written = seq
local first_seq = nil -- the seq of the call's first created row
local sa = int(now) -- every row created by the call is scheduled at its `now`
local first_due = redis.call('ZRANGE', base .. 'due', 0, 0, 'WITHSCORES')[2]
local earliest = nil
local due_entries, new_keys, new_ids, tombstones = {}, {}, {}, {}

local function write_gathered()
  call_in_slices('ZADD', base .. 'due', due_entries)
  key_index_add(base, new_keys)
  add_live_ids(base, new_ids)
  drop_tombstones(tombstones)
  ledger_write_created()
  if seq ~= seq_written then
    redis.call('SET', seq_key, int(seq))
    seq_written = seq
  end
  due_entries, new_keys, new_ids, tombstones = {}, {}, {}, {}
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
  local kind = spec.fields.k or ROW_DEFAULTS.k
  local due = kind == 'once' and slot or slot_due({ key = key, jt = spec.fields.jt }, slot)
  seq = seq + 1
  first_seq = first_seq or seq
  local id, d = int(seq) .. 'p' .. partition, int(due)
  local hash = row_key(base, key)
  if spec.status then
    redis.call('DEL', hash) -- a finished row kept under this key (a replaced one is gone already)
  end
  local values = { 'id', id, 'sa', sa, 'd', d } -- v 1, pending, once: defaults, left out (includes/row)
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
  new_keys[#new_keys + 1] = key
  new_ids[#new_ids + 1] = id
  tombstones[#tombstones + 1] = key
  if earliest == nil or due < earliest then
    earliest = due
  end
  publish_event(prefix, { id = id, key = key, v = '1', k = kind }, 'scheduled', now, { due = due })
  return due
end

local function schedule_one(spec)
  if spec.again then
    write_gathered()
    spec.status = statuses_of({ spec.key })[spec.key]
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

local replies = { 'ok', now, 0 }
for _, spec in ipairs(specs) do
  replies[#replies + 1] = schedule_one(spec)
end
replies[3] = first_seq or 0
write_gathered()
-- Wake the dispatchers once when this batch holds a due earlier than everything `due` held.
if earliest and (first_due == nil or earliest < tonumber(first_due)) then
  redis.call('PUBLISH', base .. 'wake', int(earliest))
end
return replies
