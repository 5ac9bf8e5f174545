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

-- schedule: { 'ok', sa, first seq, per spec its due or a kept row } is remembered as a line 'sa seq',
-- then per spec its due minus `sa` (or '=' when that is the previous one's: a batch of one delay), or 'k'
-- and the kept row as JSON: about 2 to 11 bytes per created timer. A refused call (duplicate, retry)
-- changed nothing and is not remembered.
local remembered_schedule = {
  pack = function(reply)
    if reply[1] ~= 'ok' then
      return nil
    end
    local sa, previous = reply[2], nil
    local lines = { string.format('%.0f %.0f', sa, reply[3]) }
    for n = 4, #reply do
      local entry = reply[n]
      -- line n - 2, not `#lines + 1` (a binary search); the common '=' asked first (no `type` call): a
      -- kept row's table never equals the previous due
      if entry == previous then
        lines[n - 2] = '=' -- compared as numbers: no text made for it
      elseif type(entry) == 'table' then
        lines[n - 2] = 'k' .. cjson.encode(entry)
      else
        lines[n - 2] = string.format('%d', entry - sa) -- an integer: not the float printer
        previous = entry
      end
    end
    return table.concat(lines, '\n')
  end,
  unpack = function(text)
    local reply, offset = nil, nil
    for line in string.gmatch(text, '[^\n]+') do
      if not reply then
        local sa, first = string.match(line, '^(%d+) (%d+)$')
        reply = { 'ok', tonumber(sa), tonumber(first) }
      elseif string.sub(line, 1, 1) == 'k' then
        reply[#reply + 1] = cjson.decode(string.sub(line, 2))
      else
        offset = line == '=' and offset or tonumber(line)
        reply[#reply + 1] = reply[2] + offset
      end
    end
    return reply
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

-- Whether the call with request `id` (a script with a codec) was answered and its answer kept: it ran and
-- changed what it answered.
local function request_answered(id)
  return redis.call('EXISTS', KEYS[1] .. 'q:' .. id) == 1
end

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
