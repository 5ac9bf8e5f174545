-- Creates (or keeps / replaces) a batch of timers of one partition: ARGV[2] tombstone ms, ARGV[3..] one
-- JSON spec each { key, ie = error|replace|keep, at?, f = row fields }. Replies one array per spec,
-- or a single { 'duplicate', 'key', key } / { 'retry', now } when the whole call was refused unchanged.
local base, prefix = KEYS[1], ARGV[1]
local tombstone_ms = tonumber(ARGV[2])
local partition = string.match(base, '{p(%d+)}:$')
local now = now_ms()

local specs = {}
for i = 3, #ARGV do
  specs[#specs + 1] = cjson.decode(ARGV[i])
end

-- First pass: every refusal happens before any write, so a refused call changes nothing.
local seen = {}
for _, spec in ipairs(specs) do
  if spec.f.k == 'cron' and tonumber(spec.at) <= now then
    -- The caller's estimate of Redis now was behind: it recomputes the occurrence after `now`.
    return { { 'retry', int(now) } }
  end
  if spec.ie == 'error' then
    local status = redis.call('HGET', row_key(base, spec.key), 's')
    if seen[spec.key] or (status and is_live(status)) then
      return { { 'duplicate', 'key', spec.key } }
    end
  end
  seen[spec.key] = true
end

local function first_due(spec)
  local f = spec.f
  if f.k == 'interval' then
    return now + tonumber(f.em)
  elseif f.dm then
    return now + tonumber(f.dm)
  end
  return tonumber(spec.at) -- once-at or cron; a past `at` stays as is and is due at once (core firstDue)
end

local function create(spec)
  local row = spec.f
  local due = first_due(spec)
  row.id = redis.call('INCR', base .. 'seq') .. 'p' .. partition
  row.key = spec.key
  row.v = '1'
  row.s = 'pending'
  row.sa = int(now)
  row.d = int(due)
  save_row(base, row) -- also clears a finished row kept under this key
  arm_due(base, spec.key, due)
  redis.call('ZADD', base .. 'keys', 0, spec.key)
  redis.call('HSET', base .. 'ids', row.id, spec.key)
  redis.call('DEL', tombstone_key(base, spec.key))
  publish_event(prefix, row, 'scheduled', now, { due = due })
  return reply('ok', row)
end

local function schedule_one(spec)
  local existing = read_row(base, spec.key)
  if existing and is_live(existing.s) then
    if spec.ie == 'keep' then
      return reply('kept', existing)
    end
    cancel_row(base, prefix, existing, 'replaced', now, 0)
  elseif spec.ie == 'keep' then
    -- A cancelled name stays cancelled while its tombstone lives.
    local tombstone = redis.call('GET', tombstone_key(base, spec.key))
    if tombstone then
      return reply('kept', cjson.decode(tombstone))
    end
  end
  return create(spec)
end

local replies = {}
for i, spec in ipairs(specs) do
  replies[i] = schedule_one(spec)
end
return replies
