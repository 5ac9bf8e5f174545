-- Hands due timers to BullMQ: moves every `due` entry with score <= Redis now (at most ARGV[2]) to
-- `armed` (score = now, the hand-off time the reconciler's grace counts from), naming on each row (`j`)
-- the one job the dispatcher will add for this batch.
-- Replies { jobId or '', next due score left in `due` or '', now, id, key, version, due, ... }.
local base = KEYS[1]
local limit = tonumber(ARGV[2])
local now = now_ms()
local due_key, armed_key = base .. 'due', base .. 'armed'

local job_id
local out = { '', '', int(now) }
local entries = redis.call('ZRANGEBYSCORE', due_key, '-inf', int(now), 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #entries, 2 do
  local key, score = entries[i], entries[i + 1]
  redis.call('ZREM', due_key, key)
  local row = redis.call('HMGET', row_key(base, key), 'id', 'v', 's', 'rc')
  -- An intent whose row is gone or no longer pending is dropped: nothing would claim it.
  if row[1] and row[3] == 'pending' then
    job_id = job_id or ('t-' .. row[1] .. '-v' .. row[2] .. '-r' .. (row[4] or '0'))
    redis.call('ZADD', armed_key, now, key)
    redis.call('HSET', row_key(base, key), 'j', job_id)
    out[#out + 1] = row[1]
    out[#out + 1] = key
    out[#out + 1] = row[2]
    out[#out + 1] = score
  end
end

local first = redis.call('ZRANGE', due_key, 0, 0, 'WITHSCORES')
out[1] = job_id or ''
out[2] = first[2] or ''
return out
