-- Include: A cancelAll's scope record (docs/design.md "The cancelAll scope record"). A cancelAll with
-- records marks its keys instead of cancelling each while its caller waits: the partition's one record
-- `P:{pN}:sc` = '<rid> <at> <tombstone ms> <reason>' (the call's id, time, tombstone time and event reason)
-- and the set `P:{pN}:scm` of the keys it covers — taken out of `keys` and `due` at the mark, so list,
-- schedule's index check, a later cancelAll, take-due and the backlog gauges no longer see them (nor
-- `leases` and `armed`: their covered keys are settled at once). A covered key's row is still its live row until
-- it is **settled**: cancelled as a cancel at `at` would have (tombstone, version bump, ledger entry,
-- `cancelled` event: cancel_row), and out of `scm`. Every script that acts on a row by its key settles it
-- first (`settle_scopes`); cancel-all.lua's sweep settles the rest in batches and drops the record with
-- its last key.
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/retire"

--- @per-call: whether `scm` exists (nil: not looked yet) and the record as this call read it
local scope_marked, scope_read = nil, nil

-- Whether the partition has covered keys: one EXISTS a call (a usually absent key).
local function scopes_marked(base)
  if scope_marked == nil then
    scope_marked = redis.call('EXISTS', base .. 'scm') == 1
  end
  return scope_marked
end

-- The partition's record as { rid, at, tombstone_ms, reason }, or false when there is none.
local function scope_record(base)
  if scope_read == nil then
    local text = redis.call('GET', base .. 'sc')
    scope_read = false
    if text then
      local rid, at, tombstone_ms, reason = string.match(text, '^(%d+) (%d+) (%d+) (.*)$')
      scope_read = { rid = rid, at = tonumber(at), tombstone_ms = tonumber(tombstone_ms), reason = reason }
    end
  end
  return scope_read
end

-- Drops the record once it covers no key.
local function drop_swept_record(base)
  if redis.call('EXISTS', base .. 'scm') == 0 then
    redis.call('DEL', base .. 'sc')
    scope_marked, scope_read = false, false
  end
end

-- Whether each of `names` is covered (index → true), or nil when no key of the partition is.
local function scopes_covering(base, names)
  if #names == 0 or not scopes_marked(base) then
    return nil
  end
  local covering = {}
  for first = 1, #names, 2000 do
    local last = math.min(first + 1999, #names)
    local found = redis.call('SMISMEMBER', base .. 'scm', unpack(names, first, last))
    for j = first, last do
      covering[j] = found[j - first + 1] == 1 or nil
    end
  end
  return covering
end

-- Settles the covered keys among `names` (above): a live row is cancelled with the record's time and
-- reason, a kept finished row is dropped (as a cancelAll does), and the key leaves `scm`.
local function settle_scopes(base, prefix, names)
  local covering = scopes_covering(base, names)
  local record = covering and scope_record(base)
  for i = 1, covering and #names or 0 do
    if covering[i] then
      local key = names[i]
      redis.call('SREM', base .. 'scm', key)
      local row = record and read_row(base, key)
      if row and is_live(row.s) then
        cancel_row(base, prefix, row, record.reason, record.at, record.tombstone_ms)
      elseif row then
        drop_finished(base, key)
      end
    end
  end
  if covering then
    drop_swept_record(base)
  end
end
