-- Include: Cancelling a live row: abort, bump, bury, index removal, `cancelled` event.
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"

-- The live row's part of a cancel, without its index entries (cancel-all removes those per batch):
-- abort a run in progress, bump version, `s = cancelled`, bury the row, emit `cancelled` with `reason`.
-- `row` needs id, key, v, s, k, aw, rv. `joined`: the event is joined from texts (includes/events
-- joined_event; `reason` a word that needs no JSON escape), not encoded.
local function retire_row(base, prefix, row, reason, now, tombstone_ms, joined)
  abort_runs(prefix, row)
  bump_version(row)
  row.s = 'cancelled'
  bury_row(base, row.key, tombstone_ms, now)
  if joined then
    publish_event(prefix, row, 'cancelled', now, { reason = reason }, int(now), ',"reason":"' .. reason .. '"')
  else
    publish_event(prefix, row, 'cancelled', now, { reason = reason })
  end
  -- The ledger lives as long as the tombstone (none: it goes too); a replaced key's goes on with the new row.
  ledger_expire(row.key, reason ~= 'replaced' and tombstone_ms or nil)
end

-- Cancels a live row: retire it (above) and remove its index entries; leaves a tombstone unless
-- tombstone_ms is 0, as on replace, where the new row follows at once.
local function cancel_row(base, prefix, row, reason, now, tombstone_ms)
  local key = row.key
  -- (its `armed` entry is implied while it is in `armed`: includes/ledger; `armed` is false when the fold
  -- read that `armed` does not hold the key: no ZREM of it)
  local _, armed = ledger_fold_armed(row)
  redis.call('ZREM', base .. 'due', key)
  if armed ~= false then
    redis.call('ZREM', base .. 'armed', key)
  end
  redis.call('ZREM', base .. 'keys', key)
  redis.call('ZREM', base .. 'leases', key)
  remove_live_id(base, row.id)
  retire_row(base, prefix, row, reason, now, tombstone_ms, true)
end
