-- Include: The ledger of each key (docs/design.md "Ledger"): the list `P:{pN}:h:<key>`, newest first, at
-- most LEDGER_SIZE entries (the loader takes it off ARGV[2] of every script; 0 = no ledger), each a
-- compact JSON object { a = Redis ms, e = event, v = version, w = workerId, r = reason, m = message,
-- c = count, n = attempt, d = due ms } (absent fields left out). Every entry is made by the script that
-- makes its change: `publish_event` records every event (`ledger_record`); pause and the reconciler's
-- requeue, which publish none, call `ledger_append` themselves. A held claim (`claimed`) keeps its entry
-- on the row it writes anyway (`lq`, `ledger_defer`), and the hand-off (take-due's `armed`) is implied by
-- the row being in `armed` (`ledger_fold_armed`), instead of a list write per timer; the row's next entry
-- writes them first, in the same LPUSH. A removed one-shot whose whole life is kept on its row writes its
-- ledger as one string instead (`ledger_close_append`). Entry texts: includes/ledger-entries.
-- A failed (or lost) run's `r` is its error's reason; `x` = why the run ended its timer, when it did.
--- @include "includes/time"
--- @include "includes/ledger-entries"

-- How long the ledger of a timer that ended and was removed (removeOnComplete) or dropped stays
-- readable: as long as a cancelled timer's tombstone does by default (7 days).
local LEDGER_KEEP_MS = 604800000
-- (as text for a command argument: redis.call prints a number with the float printer)
local LEDGER_KEEP_TEXT = '604800000'

local function ledger_key(key)
  return KEYS[1] .. 'h:' .. key
end

-- The closed ledger of a key removed on completion (`P:{pN}:hd:<key>`, a string with TTL): its entries
-- oldest first, one per line, all older than any in the list `h:` (docs/design.md "Ledger").
local function closed_ledger_key(key)
  return KEYS[1] .. 'hd:' .. key
end

-- Entries kept as text, one per line (`lq`, a closed ledger), as a table.
local function entry_lines(text)
  local lines = {}
  for line in string.gmatch(text or '', '[^\n]+') do
    lines[#lines + 1] = line
  end
  return lines
end

-- The last LEDGER_SIZE lines of `text` (entries oldest first, one per line).
local function last_entries(text)
  local lines = entry_lines(text)
  if #lines <= LEDGER_SIZE then
    return text
  end
  return table.concat(lines, '\n', #lines - LEDGER_SIZE + 1)
end

-- Appends `entries` (oldest first, one per line) to the closed ledger of `key`: one SET when it has none,
-- which is the rule (a key closes twice within LEDGER_KEEP_MS only when a release before this one
-- scheduled it again: this one folds it into the list then, ledger_write_created). `ms`: its new TTL (ms
-- as text), or nil to keep the TTL it has (then only an existing one takes them, like LPUSHX).
local function ledger_close_append(key, entries, ms)
  local name = closed_ledger_key(key)
  local earlier
  if ms then
    earlier = redis.call('SET', name, entries, 'PX', ms, 'NX', 'GET')
  else
    earlier = redis.call('GET', name)
  end
  if earlier then
    local merged = last_entries(earlier .. '\n' .. entries)
    if ms then
      redis.call('SET', name, merged, 'PX', ms)
    else
      redis.call('SET', name, merged, 'KEEPTTL')
    end
  end
end

-- A held run's lease score is an integer while nothing but its claim wrote the row's kept entries:
-- its completion then takes the row as its worker has it, unread (includes/one-shot-rows). A ledger
-- write that takes them from a running row marks the score (`<score>.5`, 0.5 ms later), as every
-- lease renewal does (includes/leases): the completion reads the row then.
local function ledger_mark_lease(key)
  local leases = KEYS[1] .. 'leases'
  local score = redis.call('ZSCORE', leases, key)
  if score and not string.find(score, '.', 1, true) then
    redis.call('ZADD', leases, 'XX', score .. '.5', key)
  end
end

-- Appends an entry for `row` (its key, version `v` unless `version` is given, `sa`, and the entries it
-- keeps, `lq`: written first, in the same LPUSH, and dropped from the row — unless `row.drops_lq`: the
-- script deletes the row or the field itself, in a command it sends anyway). A timer's first entry,
-- 'scheduled' at version 1, is implied by its row while nothing else happened to it, so a pending timer
-- costs no ledger key: the first real entry writes it underneath, from `sa` (a script that moves `sa`
-- calls `ledger_open` first), unless the kept entries hold it. A subject that is not a row (no `sa`: a
-- stale job's ref of a gone key) only goes into a ledger that exists already. `row.closes`: the caller
-- removes the row now (complete.lua); when its kept entries hold its whole life they and the new entry
-- go into the closed ledger in one SET, and `row.closed` says so (no list to expire). `entry`: the new
-- entry's text when the caller made it (else it is made from the other arguments).
local function ledger_append(row, event, now, fields, version, entry)
  -- a row's implied `armed` entry goes first; the row stays armed, marked written (ledger_fold_armed)
  ledger_mark_armed(row.key, row.sa and ledger_fold_armed(row))
  local kept = row.lq
  if kept then
    row.lq = nil
    if not row.drops_lq then
      redis.call('HDEL', KEYS[1] .. 't:' .. row.key, 'lq')
      if row.s == 'running' then
        -- (a duplicate claim's or an older run's stale entry: the run's own completion must not trust
        -- its worker's copy of these entries, includes/one-shot-rows)
        ledger_mark_lease(row.key)
      end
    end
  end
  if LEDGER_SIZE == 0 then
    return
  end
  entry = entry or ledger_entry(now, event, version or row.v, fields)
  if row.closed or (row.closes and keeps_first_entry(kept)) then
    -- A row removed now whose whole life is kept (its first entry too): no list holds anything of it,
    -- and what the script records of it after that (a cron's last skips) follows in the same place.
    ledger_close_append(row.key, kept and (kept .. '\n' .. entry) or entry, LEDGER_KEEP_TEXT)
    row.closed = true
    return
  end
  local name = ledger_key(row.key)
  local entries = entry_lines(kept)
  entries[#entries + 1] = entry
  local length
  if row.sa then
    length = redis.call('LPUSH', name, unpack(entries))
    if length == #entries and not keeps_first_entry(kept) then
      local sa = ledger.opened == row.key and ledger.opened_sa or row.sa -- (ledger_open)
      length = redis.call('RPUSH', name, scheduled_entry(sa))
    end
  else
    length = redis.call('LPUSHX', name, unpack(entries))
    if length == 0 then
      -- a gone key whose ledger is closed (ledger_close_append) takes it there
      ledger_close_append(row.key, table.concat(entries, '\n'), nil)
    end
  end
  if length > LEDGER_SIZE then
    redis.call('LTRIM', name, 0, LEDGER_SIZE - 1)
  end
end

-- Moves the closed ledger of `key` under the list `list` (its entries are the older: RPUSHed, newest of
-- them first); a list it makes takes its TTL. Repartition-take: the ledger moves as one list.
local function ledger_fold_closed(key, list)
  local name = closed_ledger_key(key)
  local ms = redis.call('PTTL', name)
  if ms < 0 then
    return
  end
  local lines, newest_first = entry_lines(redis.call('GET', name)), {}
  for i = #lines, 1, -1 do
    newest_first[#newest_first + 1] = lines[i]
  end
  local length = redis.call('RPUSH', list, unpack(newest_first))
  if length == #newest_first then
    redis.call('PEXPIRE', list, ms)
  end
  redis.call('DEL', name)
end

-- Before a change of `sa` (reschedule): the implied first entry a row without a ledger writes under its
-- next entry is the one of its `sa` now. Kept for the call's next ledger_append of the row, which writes
-- it when its LPUSH made the list — no EXISTS before (~10k instructions a reschedule).
local function ledger_open(row)
  ledger.opened, ledger.opened_sa = row.key, row.sa
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

-- A creation at `now` (version 1): its entry is the one a row implies (no due), written only where an
-- earlier life of the key left a ledger (ledger_write_created).
local function ledger_note_created(key, now)
  ledger.created[#ledger.created + 1] = key
  ledger.created_at = now
end

-- The creations of `keys` at `now`, as ledger_note_created of each: schedule.lua's rows, a call per batch
-- rather than per row (`keys` becomes the list when it is empty, as it is in schedule.lua).
local function ledger_note_all_created(keys, now)
  local created = ledger.created
  if #created == 0 then
    ledger.created = keys
  else
    for i = 1, #keys do
      created[#created + 1] = keys[i]
    end
  end
  if #keys > 0 then
    ledger.created_at = now
  end
end

local schedule_entries = { reschedule = 'rescheduled', resume = 'resumed', trigger = 'triggered', backfill = 'backfilled' }

-- The entry of an event (core ledger.ts `ledgerEntryOf` maps the engine's events the same way): a
-- `running` event is the claim, `scheduled` with a reason the operation that armed it again, a run
-- settled as lost is lost, a failed run's reason is its error's (the event's own is `x`: ended).
-- Its version is the event's (a stale ref's, a run's).
local function ledger_record(row, event_type, now, extra)
  if LEDGER_SIZE == 0 then
    return
  end
  extra = extra or {}
  local event, reason, ended = event_type, extra.reason, nil
  if event_type == 'scheduled' then
    event, reason = schedule_entries[reason] or 'scheduled', nil
  elseif event_type == 'running' then
    event = 'claimed'
  elseif event_type == 'cancelled' and reason == 'replaced' then
    event, reason = 'replaced', nil
  elseif event_type == 'failed' then
    -- its `r` is its error's reason: the event's own (why the run ended its timer) is `x`
    ended, reason = reason, nil
    -- `lost` only for a run complete.lua settles as lost (`row.lost_run`): a handler's error may carry
    -- reason 'lost' too, and that run failed
    event = row.lost_run and 'lost' or event
  end
  local held_due
  -- (`+ 0`, not tonumber, which parses the text twice: `v` is always a number's text here)
  if (event_type == 'completed' or event_type == 'failed') and row.v + 0 == extra.version then
    -- A held run's outcome: the row still holds its due (a free run's row has moved on to the next tick).
    held_due = row.tg or row.d
  end
  -- A stale claim's or completion's worker is not the row's lease owner: only its caller knows it
  -- (`ledger.worker`: claim.lua, complete.lua).
  local worker = ledger.worker or (event_type ~= 'stale' and row.lw) or nil
  if event == 'completed' and held_due and not (reason or extra.count or extra.attempt or extra.error) then
    -- a held run's plain completion: its entry joined from the texts at hand (no fields table)
    return ledger_append(row, event, now, nil, extra.version, completed_entry(now, row.v, held_due, worker))
  end
  if event == 'rescheduled' then
    -- reschedule.lua set the row's `sa` and `d` to this call's now and the new due, as text: the entry is
    -- joined from them (cjson.encode of a table prints its three numbers again, ~3k instructions each)
    return ledger_append(row, event, now, nil, nil, '{"a":' .. row.sa .. ',"e":"rescheduled","v":' .. row.v .. ',"d":' .. row.d .. '}')
  end
  local version = extra.version or row.v
  local plain = not (extra.count or extra.due or extra.attempt or extra.error or worker or held_due or ended)
  if plain and version and event ~= 'scheduled' and (not reason or string.find(reason, '^[%w-]+$')) then
    -- an entry of at most a reason (a cancel's, a pause's): joined the same way, its version as text
    local r = reason and (',"r":"' .. reason .. '"') or ''
    version = type(version) == 'number' and int(version) or version
    return ledger_append(row, event, now, nil, nil, '{"a":' .. int(now) .. ',"e":"' .. event .. '","v":' .. version .. r .. '}')
  end
  local fields = { r = reason, c = extra.count, d = extra.due, n = extra.attempt, w = worker, x = ended }
  if held_due then
    fields.d = tonumber(held_due)
  end
  if extra.error then
    fields.m, fields.r = extra.error.message, extra.error.reason
  end
  if event == 'scheduled' then
    ledger_note_created(row.key, now)
    return
  end
  ledger_append(row, event, now, fields, extra.version)
end

-- The 'scheduled' entries of the rows created since the last call (schedule.lua, once per batch): a new
-- row implies its own, so only a key whose ledger outlived an earlier life (cancelled, replaced, removed
-- on completion) takes it, and that ledger lives with the row again. One EXISTS over the batch finds
-- whether there is any: usually none, and then no command per row.
local function ledger_write_created()
  local created = ledger.created
  ledger.created = {}
  if LEDGER_SIZE == 0 or #created == 0 then
    return
  end
  -- a key's ledger is its list and its closed ledger (ledger_close_append): both names in the one EXISTS
  local names, found = {}, 0
  for i, key in ipairs(created) do
    names[2 * i - 1], names[2 * i] = ledger_key(key), closed_ledger_key(key)
  end
  for first = 1, #names, 2000 do
    found = found + redis.call('EXISTS', unpack(names, first, math.min(first + 1999, #names)))
  end
  if found == 0 then
    return
  end
  local entry = ledger_entry(ledger.created_at, 'scheduled', 1, {})
  for i, key in ipairs(created) do
    local list = names[2 * i - 1]
    local length = redis.call('LPUSHX', list, entry)
    local closed = length == 0 and redis.call('GET', names[2 * i])
    if closed then
      -- the closed ledger of the key's earlier lives goes into the list, under the new entry: the key
      -- lives again, and its ledger with it (a closed ledger only ever expires)
      redis.call('DEL', names[2 * i])
      local entries = entry_lines(closed)
      entries[#entries + 1] = entry
      length = redis.call('LPUSH', list, unpack(entries))
    end
    if length > 0 then
      -- its first hand-off must not write the 'scheduled' entry again (ledger_hand_off)
      redis.call('HSET', KEYS[1] .. 't:' .. key, 'lo', '1')
      ledger_expire(key, nil)
      if length > LEDGER_SIZE then
        redis.call('LTRIM', list, 0, LEDGER_SIZE - 1)
      end
    end
  end
end
