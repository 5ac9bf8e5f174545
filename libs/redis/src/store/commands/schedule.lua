-- Creates (or keeps / replaces) a batch of timers of one partition.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] tombstone ms, ARGV[3] the request id of the batch's first call in this
--   partition when this is a later one ('' none: this call runs only if that one was answered 'ok'; a
--   guard call of a caller's request names it too: answered, the call answers { 'passed' }),
--   ARGV[4] the guard keys as a JSON array (ifExists 'error' keys of the same batch sent in other
--   calls: one of them live refuses this call too), ARGV[5] the specs as one flat JSON array, per spec:
--   key, ifExists (error|replace|keep), kind (once|interval|cron), at (ms, or '' for none),
--   its row's `h` and `p` (encodeSpecFields; '' for no `p`), n (a number), then its n other row fields
--   as name/value pairs (strings); ARGV[6] '1' when no key is in the call twice (the client checked), ARGV[7]
--   '1' when every spec is a plain one-shot (ifExists error, an `at`, no row field but `h`, `p`), sent as 4
--   elements: key, at, h, p ('' for no `p`); ARGV[8] '1' when only this client repeats the call (its own
--   resend: its request id is not the caller's), so its first answer may be kept as this release reads it
--   (includes/requests: '@' lines); ARGV[9], when sent, a call of another request of the caller that takes
--   this call's one key (WriteOptions.unlessAnswered: HTTP PUT's replace step): answered, this call is
--   refused { 'duplicate', key } unchanged
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`
-- Output: { 'ok', sa, first id's seq, then per spec its due for a created row (a one-shot's `at` as it
--   came, text; any other due a number) or { 'kept', row as pairs } } — no spec's entry in a call of plain
--   one-shots (ARGV[7]) only its client repeats (ARGV[8]): each was created, due at its `at` as sent. The
--   created rows' ids are consecutive seqs from the first one (the caller knows the rest of them: `sa`
--   shared, v 1, pending, its own fields). Or { 'duplicate', key } /
--   { 'retry', now } / { 'refused' } (the first call was not answered 'ok') when the whole call was
--   refused unchanged; { 'passed' } for a guard call (no spec) whose ARGV[3] call was answered.

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/retire"
--- @include "includes/requests"
--- @include "includes/slots"
--- @include "includes/cancel-record"
--- @include "includes/seq-ids"
--- @include "includes/scope-records"

-- The specs and guards come as one JSON array each, not as ARGV elements: a command argument costs
-- Redis its parse and the client its encoding (ioredis), a JSON string element far less of both
-- (docs/design.md "Performance"). The specs are read where they lie in `argv`, a dozen reads per spec.
local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms = tonumber(ARGV[2])
local first_request = ARGV[3]
local guards = cjson.decode(ARGV[4])
local argv = cjson.decode(ARGV[5])
-- Which element of a spec holds its at, h and p: 3, 4, 5 past its key, or 1, 2, 3 in a call of plain
-- one-shots, whose ifExists (error), kind (once) and field count (0) are not sent (an element decoded and
-- read costs ~0.6k instructions: docs/design.md "scheduleMany").
local plain = ARGV[7] == '1'
local AT, H, P = 3, 4, 5
if plain then
  AT, H, P = 1, 2, 3
end
local distinct = ARGV[6] == '1'
-- the partition's number: base ends '{pN}:' (one node) or '{pN.s}:' (Redis Cluster, keys.ts)
local partition = string.match(base, '{p(%d+)[}.]')
local now = now_ms()
local argc = #argv
-- what runs once per spec, as locals: a global is a table lookup each time
local format, call, unpack = string.format, redis.call, unpack

-- The specs are read where they lie in `argv`, without a table each: `starts[n]` is where spec n begins,
-- `keys[n]` its key. A spec's row fields are read into a table only when its due needs them (below).
local starts, keys = {}, {}
local i, spec_count = 1, 0
while i <= argc do
  spec_count = spec_count + 1 -- a count, not `#`: Lua finds a table's length by a binary search
  starts[spec_count], keys[spec_count] = i, argv[i]
  i = plain and i + 4 or i + 7 + 2 * argv[i + 6] -- a number (cjson)
end

-- Whether each key holds a row, and its status: a row exists iff its key is in `keys` (docs/design.md
-- "Index membership"), so one ZMSCORE answers for a whole batch of new keys and only a row that
-- exists is read (its `id` tells a row from none, `s` may be left out). The status of each of `names`, in
-- their order (false: no row).
local function statuses_of(names)
  local found = {}
  for first = 1, #names, 2000 do
    local last = math.min(first + 1999, #names)
    local scores = redis.call('ZMSCORE', base .. 'keys', unpack(names, first, last))
    for j = first, last do
      local row = scores[j - first + 1] and redis.call('HMGET', row_key(base, names[j]), 'id', 's')
      found[j] = row and row[1] and (row[2] or ROW_DEFAULTS.s)
    end
  end
  return found
end

-- A spec's row fields (ARGV name/value pairs) as a table: for a due that is not its `at` as given.
local function fields_of(start)
  local fields = {}
  for j = start + 7, start + 6 + 2 * tonumber(argv[start + 6]), 2 do
    fields[argv[j]] = argv[j + 1]
  end
  return fields
end

-- First pass: every refusal happens before any write, so a refused call changes nothing. A later call of
-- a batch runs after its first one (one connection runs them in order), which checked this one's keys as
-- guards: refused or not run, it left no answer, and this call must not write either. A guard call (no
-- spec) of a caller's request names its batch's first call in this partition: answered, a twin of the
-- request (a retry sent at once, another replica's) passed the batch's check and wrote: { 'passed' }.
if first_request ~= '' and argc == 0 then
  if request_answered(first_request) then
    return { 'passed' }
  end
elseif first_request ~= '' and not request_answered(first_request) then
  return { 'refused' }
end
if ARGV[9] and request_answered(ARGV[9]) then
  return { 'duplicate', keys[1] }
end
-- A key a cancelAll's scope record covers is out of `keys` with its row still there: settled first, it is
-- a tombstone (includes/scope-records), and the key is scheduled anew.
settle_scopes(base, prefix, keys)
local status_of = statuses_of(keys)
local seen, again = {}, {}
for n = 1, spec_count do
  local key, start = keys[n], starts[n]
  if not plain and argv[start + 2] == 'cron' and tonumber(argv[start + 3]) <= now then
    -- The caller's estimate of Redis now was behind: it recomputes the occurrence after `now`.
    return { 'retry', now }
  end
  local status = status_of[n]
  if (plain or argv[start + 1] == 'error') and ((status and is_live(status)) or (not distinct and seen[key])) then
    return { 'duplicate', key }
  end
  if not distinct then
    again[n] = seen[key] -- a key met earlier in this batch: its status above is out of date
    seen[key] = true
  end
end
-- The guards (the batch's later calls' keys, later specs) after this call's own: the batch is refused at
-- its first live key, as on every backend (docs/spec.md §3.1). Numeric loops, not ipairs: an iterator
-- call per element.
local guard_status = statuses_of(guards)
for g = 1, #guards do
  local status = guard_status[g]
  if status and is_live(status) then
    return { 'duplicate', guards[g] }
  end
end

-- Index writes of new rows are gathered and written once per batch (one command per index, not per row).
local seq_key = base .. 'seq'
-- (none: the partition's first id comes, and `kt` with it: write_gathered)
local seq_text = redis.call('GET', seq_key)
local first_ids = not seq_text
local seq = tonumber(seq_text or '0')
local seq_written = seq
local first_seq = nil -- the seq of the call's first created row
local sa = int(now) -- every row created by the call is scheduled at its `now`
local first_due = redis.call('ZRANGE', base .. 'due', 0, 0, 'WITHSCORES')[2]
local id_of = seq_ids(partition)
-- A few rows' earliest due is kept as they are made (a number each); a larger call's is read back from
-- `due` once after its writes (one ZRANGE: ~5k instructions a call, against ~1k a row for the number).
local few, earliest = spec_count <= 4, nil
-- gathered: the entries in each of the first two (two per created row), the keys in `created_keys` half
local due_entries, key_entries, created_keys, gathered = {}, {}, {}, 0

-- The rows created since the last write_gathered hold the ids seq_written + 1 .. seq.
local function write_gathered()
  call_in_slices('ZADD', base .. 'due', due_entries)
  call_in_slices('ZADD', base .. 'keys', key_entries)
  ledger_note_all_created(created_keys, now)
  settle_created() -- the created keys' tombstones and ledgers
  if seq ~= seq_written then
    add_new_live_seqs(base, seq_written + 1, seq)
    redis.call('SET', seq_key, int(seq))
    if first_ids then
      -- the partition's first id: every kept finished row it will hold is noted (`kept`, cancel-all.lua)
      redis.call('SET', base .. 'kt', '1')
      first_ids = false
    end
    seq_written = seq
  end
  due_entries, key_entries, created_keys, gathered = {}, {}, {}, 0
end

-- The first slot and its due of a spec whose `at` (ARGV text) is not simply its due: a delay, an
-- interval, a cron (jitter moves its due off the slot).
local function slot_and_due(key, kind, at, fields)
  local slot = tonumber(at)
  if kind == 'interval' and fields.st then
    -- startAt: the first grid slot not before it (core firstSlot)
    slot = next_grid_slot({ sa = now, em = fields.em }, math.max(now, tonumber(fields.st) - 1))
  elseif kind == 'interval' then
    slot = now + tonumber(fields.em)
  elseif fields.dm then
    slot = now + tonumber(fields.dm)
  end -- else once-at or cron: a past `at` stays as is and is due at once (core firstDue)
  -- a periodic slot is due moved by its jitter (includes/slots); `ds` keeps the slot
  return slot, kind == 'once' and slot or slot_due({ key = key, jt = fields.jt }, slot)
end

-- One HSET's arguments, reused row after row (unpack takes the first `count`): v 1, pending, once are
-- defaults, left out (includes/row).
local values = { 'id', '', 'sa', sa, 'd', '' }

-- The row of a spec that is not a plain one-shot (create, below): `ds`, its other fields, from `values`.
local function write_row(hash, id, start, kind, at)
  local count = 6
  local slot, due = slot_and_due(argv[start], kind, at, fields_of(start))
  local d = int(due)
  if due ~= slot then
    values[7], values[8] = 'ds', int(slot)
    count = 8
  end
  values[2], values[6] = id, d
  values[count + 1], values[count + 2] = 'h', argv[start + 4]
  count = count + 2
  if argv[start + 5] ~= '' then
    values[count + 1], values[count + 2] = 'p', argv[start + 5]
    count = count + 2
  end
  for j = start + 7, start + 6 + 2 * argv[start + 6] do
    count = count + 1
    values[count] = argv[j]
  end
  call('HSET', hash, unpack(values, 1, count))
  return due, d
end

-- A new row for the spec at ARGV `start`. A plain one-shot (an `at`, no other fields: the bulk of a
-- batch) is written as it came: its `at` text is its `d`, its due in the reply and in `due`, with no
-- table, no number parsed or printed (docs/design.md "scheduleMany").
local function create(start, key, had_row)
  local kind, at = plain and 'once' or argv[start + 2], argv[start + AT]
  seq = seq + 1
  first_seq = first_seq or seq
  local id = id_of(seq)
  local hash = base .. 't:' .. key -- row_key's name, one concatenation without a call
  if had_row then
    redis.call('DEL', hash) -- a finished row kept under this key (a replaced one is gone already)
    redis.call('SREM', base .. 'kr', key) -- (includes/indexes note_kept)
  end
  local due, d = at, at
  if not plain and (kind ~= 'once' or at == '' or argv[start + 6] ~= 0) then
    due, d = write_row(hash, id, start, kind, at)
  elseif argv[start + P] ~= '' then
    call('HSET', hash, 'id', id, 'sa', sa, 'd', at, 'h', argv[start + H], 'p', argv[start + P])
  else
    call('HSET', hash, 'id', id, 'sa', sa, 'd', at, 'h', argv[start + H])
  end
  local n = gathered
  gathered = n + 2
  due_entries[n + 1], due_entries[n + 2] = d, key
  key_entries[n + 1], key_entries[n + 2] = '0', key -- text: redis.call prints a number with `%.17g`
  created_keys[n / 2 + 1] = key -- its tombstone goes, its ledger (if any) goes on (write_gathered)
  if few and (earliest == nil or due + 0 < earliest) then
    earliest = due + 0
  end
  if event_listeners ~= 0 then -- includes/events: the call's first event found no one listening
    announce_event(prefix, { id = id, key = key, v = '1', k = kind }, 'scheduled', now, { due = due + 0 })
  end
  return due
end

local function schedule_one(n)
  local start, key = starts[n], keys[n]
  local status = status_of[n]
  if again[n] then
    write_gathered()
    status = statuses_of({ key })[1]
  end
  local keep = not plain and argv[start + 1] == 'keep'
  if status and is_live(status) then
    if keep then
      return reply('kept', read_row(base, key))
    end
    cancel_row(base, prefix, read_row(base, key), 'replaced', now, 0)
  elseif keep then
    -- A cancelled name stays cancelled while its tombstone lives.
    local cancelled = read_tombstone(base, key)
    if cancelled then
      return reply('kept', cancelled)
    end
  end
  return create(start, key, status)
end

local replies = { 'ok', now, 0 }
if plain and ARGV[8] == '1' then
  -- Every spec of a plain call is created (or the call was refused above), its due the `at` it was sent
  -- with: the client answers them from its own specs, and only this client reads the memo of this reply
  -- (its one line 'sa seq'). ~1.9k instructions a timer less: no entry, no reply element, no memo line.
  for n = 1, spec_count do
    schedule_one(n)
  end
else
  for n = 1, spec_count do
    replies[n + 3] = schedule_one(n)
  end
end
replies[3] = first_seq or 0
write_gathered()
-- Wake the dispatchers once when this batch holds a due earlier than everything `due` held: then it is
-- `due`'s first now.
if first_seq and not few then
  earliest = tonumber(redis.call('ZRANGE', base .. 'due', 0, 0, 'WITHSCORES')[2])
end
if earliest and (first_due == nil or earliest < tonumber(first_due)) then
  redis.call('PUBLISH', base .. 'wake', int(earliest))
end
return replies
