-- Include: A cancel-all's ledger entries kept as one record per call (docs/design.md "Ledger"). A key
-- cancelled in bulk with no ledger list gets no list write: its tombstone holds the row (`v`, `sa`, `lq`)
-- and expires at the call's `now` + tombstone ms (bury_row), and the call writes once, for all its keys,
-- `P:{pN}:xb:<that expiry ms>` = { a = now, r = reason }, expiring with them. The key's entries are then
-- derived: `cancelled` (at `a`, reason `r`, the tombstone's version + 1), the kept `lq`, the implied
-- `scheduled` — by `history` (client ledger-reads.ts) and, where the tombstone goes (scheduled again,
-- moved by a repartition), written to the list first (`ledger_settle`).
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/ledger"

local function cancel_record_key(expires_at)
  return KEYS[1] .. 'xb:' .. int(expires_at)
end

-- Writes the call's record; false when another call's record holds that ms (two calls in one ms with
-- another reason or tombstone time): this call then writes each key's entries itself.
local function write_cancel_record(now, expires_at, reason)
  if LEDGER_SIZE == 0 then
    return true
  end
  local name = cancel_record_key(expires_at)
  local record = '{"a":' .. int(now) .. ',"r":' .. cjson.encode(reason) .. '}'
  if redis.call('SET', name, record, 'NX', 'PXAT', int(expires_at)) then
    return true
  end
  return redis.call('GET', name) == record
end

-- Writes the entries derived from the tombstone of `key` (above) to its ledger, which then lives as long
-- as the tombstone: before the tombstone goes or moves. Nothing when there is no tombstone, its cancel
-- is in the ledger already — whenever the list exists: a cancel-all writes its cancel into a list that
-- exists, and none is made while the tombstone lasts (a row whose run goes on writes its own list, so
-- that the run's stale end, newer than the cancel, follows it there) — or no record stands for it.
local function ledger_settle(key)
  if LEDGER_SIZE == 0 then
    return
  end
  local tombstone = tombstone_key(KEYS[1], key)
  local f = redis.call('HMGET', tombstone, 'id', 'v', 'sa', 'lq')
  if not f[1] then
    return
  end
  if redis.call('EXISTS', ledger_key(key)) == 1 then
    return
  end
  local version = tonumber(f[2] or ROW_DEFAULTS.v) + 1
  local expires_at = redis.call('PEXPIRETIME', tombstone)
  local record = redis.call('GET', cancel_record_key(expires_at))
  if not record then
    return
  end
  record = cjson.decode(record)
  -- the tombstone keeps its `lq`: the cancel now at the ledger's head says it is written
  local row = { key = key, sa = f[3], lq = f[4] or nil, drops_lq = true }
  ledger_append(row, 'cancelled', record.a, { r = record.r }, version)
  redis.call('PEXPIREAT', ledger_key(key), expires_at)
end

-- Deletes the tombstones of `keys` (schedule: the keys are scheduled anew), their derived entries
-- written first so the key's ledger goes on in order. One EXISTS over the batch's tombstones (called
-- when settle_created found a tombstone or a ledger): only when one exists, a settle per key and the DEL.
local function drop_tombstones(keys)
  local names = {}
  for i, key in ipairs(keys) do
    names[i] = tombstone_key(KEYS[1], key)
  end
  if call_in_slices('EXISTS', nil, names) == 0 then
    return
  end
  for _, key in ipairs(keys) do
    ledger_settle(key)
  end
  call_in_slices('DEL', nil, names)
end

-- What earlier lives of the keys just created left (schedule.lua, once per call): their tombstones go
-- (drop_tombstones) and their ledgers take the new lives (ledger_write_created). One EXISTS over all
-- their names first: usually there is none, and then neither builds its names or sends its own EXISTS.
local function settle_created()
  local created = ledger.created
  -- tombstone_key, ledger_key and closed_ledger_key of each, without a call per name (~250 instructions,
  -- three a created timer); each one concatenation
  local base, names = KEYS[1], {}
  for i = 1, #created do
    local key = created[i]
    names[3 * i - 2], names[3 * i - 1], names[3 * i] = base .. 'x:' .. key, base .. 'h:' .. key, base .. 'hd:' .. key
  end
  if call_in_slices('EXISTS', nil, names) == 0 then
    ledger.created = {}
    return
  end
  drop_tombstones(created)
  ledger_write_created()
end
