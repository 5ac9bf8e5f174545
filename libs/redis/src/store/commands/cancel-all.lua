-- Cancels one bounded batch of a scope through the lex index (O(batch), never a keyspace scan). Calls
-- may overlap (pipelined): each takes the first keys still in the index.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] tombstone ms, ARGV[3] scope ('' = every key), ARGV[4] batch size,
--   ARGV[5] event reason, ARGV[6] mode: '' cancels the batch's keys now; 'mark' marks them for the
--   partition's scope record (includes/scope-records), ARGV[7] its rid ('' for the call's first: it
--   opens the record; another call's record open: the batch is cancelled now, rid ''); 'sweep' settles
--   a batch of the record's keys; 'settle' the key ARGV[3] (a read's first step: ledger-reads.ts)
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`
-- Output: { cancelled, more (0/1), now, rid }; the client loops while `more`. A mark's `cancelled` is
-- the live rows it marked (exact: every reader settles a covered row before acting on it); a sweep's
-- `rid` is the record it swept ('' none).

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/retire"
--- @include "includes/requests"
--- @include "includes/cancel-record"
--- @include "includes/scope-records"

local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms, scope, batch, reason = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local mode, rid = ARGV[6] or '', ARGV[7] or ''
local index = base .. 'keys'
local min, max = '-', '+'
if scope ~= '' then
  -- Keys only use [A-Za-z0-9:_\-./@], so byte 255 sorts after every key that starts with the scope.
  min, max = '[' .. scope, '(' .. scope .. '\255'
end

-- Cancels `keys` (their rows live or kept finished) as of `now`: what a batch does per key, and their
-- entries in every index but `keys` (the caller's: a mark or a batch took them out, a sweep's are out).
-- Returns how many live rows it cancelled.
local function cancel_keys(keys, now, tombstone_ms, reason)
  -- A key with no ledger list takes its `cancelled` entry from the call's one record (includes/cancel-record),
  -- or, should another call hold the record's ms, from its own list write: its row's `sa` and `lq` go with it.
  local recorded = #keys == 0 or tombstone_ms == 0 or write_cancel_record(now, now + tombstone_ms, reason)

  -- Whether a pending or paused row's cancel can be its tombstone alone: no free run in the partition
  -- (nothing to abort) and the call's record written. Then, once the call's first event found no listener
  -- (publish_event; never on a Cluster, where every event is published), such a row with no ledger list
  -- (nothing to append to or expire) needs only its id and status read.
  local plain = #keys > 0 and recorded and not on_cluster and redis.call('HLEN', base .. 'free') == 0

  -- Keys handed off and not claimed imply their `armed` entry (includes/ledger ledger_fold_armed): one read
  -- of their scores when `armed` holds anything (often nothing), and such a key takes the path that keeps it.
  -- With no `armed`, nothing is noted per key (~1k Redis instructions a key): a key that takes the long way
  -- is noted not armed there, before it could ask.
  local armed_exists = #keys > 0 and redis.call('EXISTS', base .. 'armed') == 1
  if LEDGER_SIZE > 0 and armed_exists then
    local scores = redis.call('ZMSCORE', base .. 'armed', unpack(keys))
    for i = 1, #keys do
      ledger.armed[keys[i]] = scores[i] or false
    end
  end

  -- The batch's keys that have a ledger list: one EXISTS for the batch, and only when it finds some, one
  -- per key — so a key rescheduled once does not send the whole batch the long way (~113k Redis
  -- instructions a key against ~40k).
  local function keys_with_ledgers()
    local listed = {}
    if LEDGER_SIZE == 0 then
      return listed
    end
    local ledgers, ledger_prefix = {}, ledger_key('')
    for i = 1, #keys do
      ledgers[i] = ledger_prefix .. keys[i]
    end
    if call_in_slices('EXISTS', nil, ledgers) > 0 then
      for i = 1, #keys do
        if redis.call('EXISTS', ledgers[i]) == 1 then
          listed[keys[i]] = true
        end
      end
    end
    return listed
  end
  local listed = plain and keys_with_ledgers()

  -- A plain row's bury_row, inlined: the names' prefixes and the expiry's text made once per call, no
  -- function call or table per key (~5k Redis instructions a key of a cancel-all's ~45k).
  local rows, tombstones = row_key(base, ''), tombstone_key(base, '')
  local buried_until = tombstone_ms > 0 and int(now + tombstone_ms)

  -- Cancels one key of the batch the long way (its plain cancel, in the loop below, did not apply): the id
  -- of the live row it cancelled, or nil (a finished row kept by removeOnComplete=false is deleted, not
  -- counted).
  local function cancel_key(key, hash)
    if not armed_exists then
      ledger.armed[key] = false
    end
    local f = redis.call('HMGET', hash, 'id', 'v', 's', 'k', 'aw', 'rv', 'sa', 'lq', 'd', 'tg', 'rc', 'lo', 'j')
    local row = with_defaults({ key = key, id = f[1] or nil, v = f[2] or nil, s = f[3] or nil, k = f[4] or nil })
    if not (f[1] and is_live(row.s)) then
      redis.call('DEL', hash)
      if f[1] then
        redis.call('SREM', base .. 'kr', key) -- (includes/indexes note_kept)
        -- a kept finished row dropped: its ledger lasts LEDGER_KEEP_MS, as cancel's (includes/indexes drop_finished)
        ledger_expire(key, LEDGER_KEEP_MS)
      end
      return nil
    end
    -- The kept entries go with the cancel into a list (the tombstone keeps them too: the list, holding the
    -- cancel, says they are written); with no list, the record stands for them (`recorded`).
    row.aw, row.rv, row.lq = f[5] or nil, f[6] or nil, f[8] or nil
    row.d, row.tg, row.rc, row.lo, row.sa, row.j = f[9] or nil, f[10] or nil, f[11] or nil, f[12] or nil, f[7] or nil, f[13] or nil
    -- a handed-off key's `armed` entry: into the kept entries, which the tombstone keeps too
    local folded = ledger_fold_armed(row) and row.lq
    -- A run going on ends stale after this: its entry needs the list, so such a row writes its own entries
    -- as a call without a record does (with none and no list, that end was lost).
    local runs = row.s == 'running' or (row.aw == '0' and row.rv)
    row.drops_lq, row.sa = true, (not recorded or runs) and f[7] or nil
    retire_row(base, prefix, row, reason, now, tombstone_ms)
    if folded and buried_until then
      redis.call('HSET', tombstones .. key, 'lq', folded)
    end
    return row.id
  end

  -- The plain cancel of a pending or paused row is inlined here (no function call per key), the rest take
  -- cancel_key.
  local cancelled_ids, count, armed = {}, 0, ledger.armed
  for i = 1, #keys do
    local key = keys[i]
    local hash, id = rows .. key, nil
    if plain and event_listeners == 0 and not listed[key] and not armed[key] then
      local f = redis.call('HMGET', hash, 'id', 's')
      local status = f[2]
      if f[1] and (not status or status == 'pending' or status == 'paused') then
        if buried_until then
          local tombstone = tombstones .. key
          redis.call('RENAME', hash, tombstone)
          redis.call('PEXPIREAT', tombstone, buried_until)
        else
          redis.call('DEL', hash)
        end
        id = f[1]
      end
    end
    if not id then
      id = cancel_key(key, hash)
    end
    if id then
      count = count + 1
      cancelled_ids[count] = id
    end
  end
  for _, name in ipairs({ 'due', 'armed', 'leases' }) do
    -- `armed` and `leases` hold only keys the fire path has taken: often none, and then no ZREM of the batch
    if name == 'due' or (name == 'armed' and armed_exists) or (name == 'leases' and redis.call('EXISTS', base .. name) == 1) then
      call_in_slices('ZREM', base .. name, keys)
    end
  end
  remove_live_ids(base, cancelled_ids)
  return count
end

local now = now_ms()
local keys, count
if mode == 'settle' then
  -- A read's first step (`history`): the key ARGV[3] settled if the record covers it.
  settle_scopes(base, prefix, { scope })
  return { 0, 0, int(now), '' }
elseif mode == 'sweep' then
  -- Settles a batch of the record's keys (its time and reason, not this call's): out of `keys` since the
  -- mark; the record goes with its last key.
  local record = scope_record(base)
  keys = record and redis.call('SPOP', base .. 'scm', batch) or {}
  count = record and cancel_keys(keys, record.at, record.tombstone_ms, record.reason) or 0
  drop_swept_record(base)
  return { count, scopes_marked(base) and 1 or 0, int(now), record and record.rid or '' }
end
keys = redis.call('ZRANGEBYLEX', index, min, max, 'LIMIT', 0, batch)
local batch_keys = keys
local record = mode == 'mark' and #keys > 0 and scope_record(base)
if mode == 'mark' and #keys > 0 and not record and rid == '' then
  -- the partition's one record (while it is open, another call's batches are cancelled key by key)
  rid = tostring(redis.call('INCR', base .. 'scn'))
  redis.call('SET', base .. 'sc', rid .. ' ' .. int(now) .. ' ' .. int(tombstone_ms) .. ' ' .. reason)
  record = { rid = rid, at = now, tombstone_ms = tombstone_ms, reason = reason }
  scope_read = record
end
-- Marked only with no free run in the partition: a covered row's free runs would go on unaborted.
if record and record.rid == rid and redis.call('HLEN', base .. 'free') == 0 then
  -- The live rows among them (a kept finished row is dropped by the sweep, not counted): every key,
  -- when the partition has noted each kept finished row since its first id (`kt`, schedule.lua) and
  -- holds none (no `kr`: includes/indexes note_kept), else by each row's `s`. (`kept`, a string the
  -- builds of 2026-12-07 before `kr` wrote for the same and never removed, still counts as one.)
  count = #keys
  if redis.call('EXISTS', base .. 'kt') == 0 or redis.call('EXISTS', base .. 'kr', base .. 'kept') > 0 then
    local rows = row_key(base, '')
    for i = 1, #keys do
      local status = redis.call('HGET', rows .. keys[i], 's')
      if status and not is_live(status) then
        count = count - 1
      end
    end
  end
  call_in_slices('SADD', base .. 'scm', keys)
  -- Out of `due` at the mark, not at the sweep: a covered key is then in no index of the fire path
  -- (`leases` and `armed` are settled below), so take-due never meets one and the backlog gauges
  -- (metrics/backlog.ts: `due` + `armed`) count no cancelled timer.
  call_in_slices('ZREM', base .. 'due', keys)
  scope_marked = true
else
  -- No marks (none asked, another call's record open, free runs): the batch is cancelled key by key now.
  rid = record and record.rid == rid and rid or ''
  count = cancel_keys(keys, now, tombstone_ms, reason)
  keys = {}
end

-- Every key of the batch leaves every index at once (one command per index, not per key); the batch is
-- the head of the scope's range in `keys`, so one range removal takes it out of there.
if #batch_keys > 0 then
  redis.call('ZREMRANGEBYLEX', index, '[' .. batch_keys[1], '[' .. batch_keys[#batch_keys])
end

-- The marked keys the fire path holds are settled now: the running ones (`leases`), so their handlers'
-- signals abort before the answer, and the handed-off ones (`armed`). So no covered key is ever claimed
-- or completed (claim.lua and complete.lua need not look), nor handed off (out of `due` above: take-due
-- need not look either).
local held = {}
for _, name in ipairs(#keys > 0 and { 'leases', 'armed' } or {}) do
  if redis.call('EXISTS', base .. name) == 1 then
    local scores = redis.call('ZMSCORE', base .. name, unpack(keys))
    for i = 1, #keys do
      if scores[i] then
        held[#held + 1] = keys[i]
      end
    end
  end
end
settle_scopes(base, prefix, held)

local more = 0
if #batch_keys == batch and #redis.call('ZRANGEBYLEX', index, min, max, 'LIMIT', 0, 1) > 0 then
  more = 1
end
return { count, more, int(now), rid }
