-- Include: Row hashes and tombstones: read, write, reply (docs/design.md "Row hash fields").
--- @include "includes/time"

local function row_key(base, key)
  return base .. 't:' .. key
end

local function tombstone_key(base, key)
  return base .. 'x:' .. key
end

local function is_live(status)
  return status == 'pending' or status == 'running' or status == 'paused'
end

-- What a row leaves out (docs/design.md "Row values"): `v` 1, `s` pending, `k` once — 32 bytes less per
-- pending timer. Every writer leaves them out (`save_row` drops them; a field-wise write that sets `s`
-- back to pending HDELs it); the release before this one already read them absent, so the two roll.
-- `with_defaults` puts them back into a row table read from the hash; every other reader of these
-- fields (an HMGET) applies them itself.
local ROW_DEFAULTS = { v = '1', s = 'pending', k = 'once' }

local function with_defaults(row)
  -- (field by field: a `pairs` walk of ROW_DEFAULTS costs every row read more; a stored value is never false)
  row.v = row.v or ROW_DEFAULTS.v
  row.s = row.s or ROW_DEFAULTS.s
  row.k = row.k or ROW_DEFAULTS.k
  return row
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
  return with_defaults(row)
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

-- Replaces the whole hash (all fields but `key` and defaults), so fields set to nil in the table disappear.
local function save_row(base, row)
  local hash = row_key(base, row.key)
  local fields = {}
  for field, value in pairs(row) do
    if field ~= 'key' and ROW_DEFAULTS[field] ~= value then
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

-- (built in place: `flat` and an unpack of it made two tables and copied the pairs twice)
local function reply(code, row)
  local out = { code }
  for field, value in pairs(row) do
    out[#out + 1] = field
    out[#out + 1] = value
  end
  return out
end

-- The row an operation on `key` works on (pause, resume, trigger, reschedule, backfill), or nil and the
-- reply that refuses it: 'not-found' when no live row holds the key — with `s` and its status when the
-- row is a kept one that ended (completed or failed), as cancel.lua tells them apart (a release before
-- this one reads the code alone) — or 'inactive' (with the row) when its status is one of
-- `inactive_when` (a set: { running = true }). Either is a refusal: nothing written, nothing kept.
local function live_row_for(base, key, inactive_when)
  local row = read_row(base, key)
  if not row then
    return nil, { 'not-found' }
  end
  if not is_live(row.s) then
    return nil, { 'not-found', 's', row.s }
  end
  if inactive_when[row.s] then
    return nil, reply('inactive', row)
  end
  if inactive_when.running and row.tg and row.s == 'pending' then
    -- a trigger's run not claimed yet is asked for: it runs, so the timer counts as running from the
    -- trigger on, as the engine's, which starts the run at once (docs/spec.md §3.4)
    row.s = 'running'
    return nil, reply('inactive', row)
  end
  return row
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

-- The tombstone expiry of the call's last bury_row, as text: formatting an epoch ms (`%.0f` of a double)
-- cost a cancel-all more Redis time than the PEXPIREAT it is for, and every key of one call shares it.
--- @per-call: a cache of this call's expiry
local buried_until, buried_until_text = nil, nil

-- The row of a cancelled timer becomes its tombstone (docs/design.md): the hash `P:{pN}:t:<key>` is renamed
-- as it was (O(1): nothing encoded, nothing rewritten; `read_tombstone` applies the cancel). With
-- tombstone_ms 0 it just goes. It expires at `now` + tombstone_ms to the ms, the same for every key of one
-- call: a cancel-all's record is found by that time (includes/cancel-record).
local function bury_row(base, key, tombstone_ms, now)
  local hash = row_key(base, key)
  if tombstone_ms > 0 then
    local tombstone = tombstone_key(base, key)
    if buried_until ~= now + tombstone_ms then
      buried_until = now + tombstone_ms
      buried_until_text = int(buried_until)
    end
    redis.call('RENAME', hash, tombstone)
    redis.call('PEXPIREAT', tombstone, buried_until_text)
  else
    redis.call('DEL', hash)
  end
end
