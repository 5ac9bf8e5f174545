-- Include: The ledger of each key (docs/design.md "Ledger"): the list `P:{pN}:h:<key>`, newest first, at
-- most LEDGER_SIZE entries (the loader takes it off ARGV[2] of every script; 0 = no ledger), each a
-- compact JSON object { a = Redis ms, e = event, v = version, w = workerId, r = reason, m = message,
-- c = count, n = attempt, d = due ms } (absent fields left out). Written by the script that makes the
-- change: `publish_event` records every event here (`ledger_record`); pause, take-due and the
-- reconciler's requeue, which publish none, call `ledger_append` themselves.

-- How long the ledger of a timer that ended and was removed (removeOnComplete) or dropped stays
-- readable: as long as a cancelled timer's tombstone does by default (7 days).
local LEDGER_KEEP_MS = 604800000
-- The worker a claim script acts for (claim.lua sets it): its entries name it.
local ledger = { worker = nil }

local function ledger_key(key)
  return KEYS[1] .. 'h:' .. key
end

local function ledger_entry(at, event, version, fields)
  local entry = { a = at, e = event, v = tonumber(version) }
  for field, value in pairs(fields or {}) do
    entry[field] = value
  end
  return cjson.encode(entry)
end

-- Appends an entry for `row` (its key, version `v`, and `sa`). A timer's first entry, 'scheduled' at
-- version 1, is implied by its row while nothing else happened to it, so a pending timer costs no ledger
-- key: the first real entry writes it underneath, from `sa` (a script that moves `sa` calls
-- `ledger_open` first). A subject that is not a row (no `sa`: a stale job's ref, a new row's creation)
-- only goes into a ledger that exists already (a key scheduled again after a cancel or replace).
local function ledger_append(row, event, now, fields)
  if LEDGER_SIZE == 0 then
    return
  end
  local name = ledger_key(row.key)
  local entry = ledger_entry(now, event, row.v, fields)
  local length
  if row.sa then
    length = redis.call('LPUSH', name, entry)
    if length == 1 then
      length = redis.call('RPUSH', name, ledger_entry(tonumber(row.sa), 'scheduled', 1))
    end
  else
    length = redis.call('LPUSHX', name, entry)
  end
  if length > LEDGER_SIZE then
    redis.call('LTRIM', name, 0, LEDGER_SIZE - 1)
  end
end

-- Writes the implied first entry of a row that has no ledger yet: before a change of `sa`.
local function ledger_open(row)
  if LEDGER_SIZE > 0 and redis.call('EXISTS', ledger_key(row.key)) == 0 then
    redis.call('RPUSH', ledger_key(row.key), ledger_entry(tonumber(row.sa), 'scheduled', 1))
  end
end

-- The ledger outlives its row by `ms` (a tombstone's time, LEDGER_KEEP_MS after a removal), or lives as
-- long as the row again (`ms` nil: the key was scheduled anew).
local function ledger_expire(key, ms)
  if LEDGER_SIZE == 0 then
    return
  end
  if ms then
    redis.call('PEXPIRE', ledger_key(key), ms)
  else
    redis.call('PERSIST', ledger_key(key))
  end
end

local schedule_entries = { reschedule = 'rescheduled', resume = 'resumed', trigger = 'triggered', backfill = 'backfilled' }

-- The entry of an event (core ledger.ts `ledgerEntryOf` maps the engine's events the same way): a
-- `running` event is the claim, `scheduled` with a reason the operation that armed it again, a failed
-- run whose error is `lost` is lost. Its version is the event's (a stale ref's, a run's).
local function ledger_record(row, event_type, now, extra)
  if LEDGER_SIZE == 0 then
    return
  end
  extra = extra or {}
  local event, reason = event_type, extra.reason
  if event_type == 'scheduled' then
    event, reason = schedule_entries[reason] or 'scheduled', nil
  elseif event_type == 'running' then
    event = 'claimed'
  elseif event_type == 'cancelled' and reason == 'replaced' then
    event, reason = 'replaced', nil
  elseif event_type == 'failed' and extra.error and extra.error.reason == 'lost' then
    event = 'lost'
  end
  local fields = { r = reason, c = extra.count, d = extra.due, n = extra.attempt }
  if (event_type == 'completed' or event_type == 'failed') and row.v == tostring(extra.version) then
    -- A held run's outcome: the row still holds its due (a free run's row has moved on to the next tick).
    fields.d = tonumber(row.tg or row.d)
  end
  if extra.error then
    fields.m, fields.r = extra.error.message, extra.error.reason or reason
  end
  -- A stale completion's worker is not the row's lease owner: only a claim knows its own.
  fields.w = ledger.worker or (event_type ~= 'stale' and row.lw) or nil
  local subject = row
  if extra.version then
    subject = { key = row.key, v = extra.version, sa = row.sa }
  end
  if event == 'scheduled' then
    -- A creation: its entry is the one a row implies (no due); the key's ledger lives with it again.
    fields.d = nil
  end
  ledger_append(subject, event, now, fields)
  if event == 'scheduled' then
    ledger_expire(row.key, nil)
  end
end
