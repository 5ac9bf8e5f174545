-- Include: Repeated calls (docs/design.md "Repeated calls"). ioredis sends a script again when the
-- connection dropped before its reply arrived, and a caller may retry with the same request id. ARGV[1]
-- may carry, after the prefix, '\n' request id '\n' memory ms. The loader runs the body of every script
-- that includes this one inside `with_request`, which takes that off ARGV[1] (the body reads the plain
-- prefix) and, for the scripts with a codec below, answers a request it has seen with its first reply,
-- kept `memory ms` in `P:{pN}:q:<request id>`. A script without a codec (claim) reads `request.id`.
-- Uses no other include.
local request = { id = nil }

-- A refusal changed nothing: asked again, the script answers from the state as it is then. So are a
-- cancel of nothing (0) and a cron occurrence not in the future ('retry'): neither is kept.
local remembered_json = {
  pack = function(reply)
    local code = type(reply) == 'table' and reply[1]
    if reply == 0 or code == 'retry' or code == 'not-found' or code == 'inactive' then
      return nil
    end
    return cjson.encode(reply)
  end,
  unpack = function(text)
    return cjson.decode(text)
  end,
}

-- schedule: a created row is remembered as its due minus the call's `sa` (ids are consecutive `seq`
-- values from the first one), or '=' when that is the previous one's (a batch of one delay): about 2 to
-- 11 bytes per created timer; a kept row as its reply. A refused call (duplicate, retry) changed nothing
-- and is not remembered.
local remembered_schedule = {
  pack = function(replies)
    local code = replies[1] and replies[1][1]
    if code == 'duplicate' or code == 'retry' then
      return nil
    end
    local sa, first_seq, previous
    local lines = { '' }
    for _, r in ipairs(replies) do
      if r[1] == 'ok' then
        -- { 'ok', 'id', id, 'sa', sa, 'd', d }
        if not sa then
          sa, first_seq = r[5], string.match(r[3], '^(%d+)p')
        end
        local offset = string.format('%.0f', tonumber(r[7]) - tonumber(sa))
        lines[#lines + 1] = offset == previous and '=' or offset
        previous = offset
      else
        lines[#lines + 1] = 'k' .. cjson.encode(r)
      end
    end
    lines[1] = (sa or '0') .. ' ' .. (first_seq or '0')
    return table.concat(lines, '\n')
  end,
  unpack = function(text)
    local partition = string.match(KEYS[1], '{p(%d+)[}.]')
    local replies, seq, sa, offset = {}, nil, nil, nil
    for line in string.gmatch(text, '[^\n]+') do
      if not sa then
        local first
        sa, first = string.match(line, '^(%d+) (%d+)$')
        seq = tonumber(first)
      elseif string.sub(line, 1, 1) == 'k' then
        replies[#replies + 1] = cjson.decode(string.sub(line, 2))
      else
        offset = line == '=' and offset or tonumber(line)
        local id = string.format('%.0f', seq) .. 'p' .. partition
        replies[#replies + 1] = { 'ok', 'id', id, 'sa', sa, 'd', string.format('%.0f', tonumber(sa) + offset) }
        seq = seq + 1
      end
    end
    return replies
  end,
}

local request_codecs = {
  schedule = remembered_schedule,
  cancel = remembered_json,
  ['cancel-all'] = remembered_json,
  reschedule = remembered_json,
  pause = remembered_json,
  resume = remembered_json,
  trigger = remembered_json,
  backfill = remembered_json,
  complete = remembered_json,
}

local function with_request(script, body)
  local prefix, id, memory_ms = string.match(ARGV[1], '^(.-)\n(.+)\n(%d+)$')
  if not prefix then
    return body()
  end
  ARGV[1] = prefix
  request.id = id
  local codec = request_codecs[script]
  if not codec then
    return body()
  end
  local memo_key = KEYS[1] .. 'q:' .. id
  local memo = redis.call('GET', memo_key)
  if memo then
    return codec.unpack(memo)
  end
  local reply = body()
  local packed = codec.pack(reply)
  if packed then
    redis.call('SET', memo_key, packed, 'PX', memory_ms)
  end
  return reply
end
