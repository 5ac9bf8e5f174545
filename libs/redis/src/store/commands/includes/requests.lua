-- Include: Repeated calls (docs/design.md "Repeated calls"). ioredis sends a script again when the
-- connection dropped before its reply arrived, and a caller may retry with the same request id. ARGV[1]
-- may carry, after the prefix, '\n' request id '\n' memory ms. The loader runs the body of every script
-- that includes this one inside `with_request`, which takes that off ARGV[1] (the body reads the plain
-- prefix) and, for the scripts with a codec below, answers a request it has seen with its first reply,
-- kept `memory ms` in `P:{pN}:q:<request id>`. A client write's answer given again is marked, the one
-- way its client tells a replay: `{ 'again', <the first answer> }` (complete's, the fire path's, is not).
-- The memo is what every release reads; a reply is read only by the release whose function ran (each
-- calls its own library). A script without a codec (claim) reads `request.id`.
-- Uses no other include.
--- @per-call: this call's request, `id` (a call without one must not read the last call's id)
local request = {}

-- The codec that keeps `script`'s first answer (nil: claim keeps none), made when a call with a request
-- needs it: defined up front, the codecs' functions and tables cost every call of every script with
-- this include ~10k instructions (made anew on each EVALSHA, and collected after it).
local function request_codec(script)
  if script == 'schedule' then
    -- schedule: { 'ok', sa, first seq, per spec its due or a kept row } is remembered as a line 'sa seq',
    -- then per spec its due minus `sa` (or '=' when that is the previous one's: a batch of one delay), or
    -- 'k' and the kept row as JSON: about 2 to 11 bytes per created timer. A call only its own client
    -- repeats (schedule.lua's ARGV[8]: no caller's request id, so the same release) keeps a due that is
    -- its spec's `at` as sent (a plain one-shot's, answered as that text) as '@', no number printed: the
    -- repeated call sends the same specs. (A release before this one reads no '@'.) A refused call
    -- (duplicate, retry) changed nothing and is not remembered.
    return {
      marked = true,
      pack = function(reply)
        if reply[1] ~= 'ok' then
          return nil
        end
        local sa, previous, at_lines = reply[2], nil, ARGV[8] == '1'
        local lines = { string.format('%.0f %.0f', sa, reply[3]) }
        for n = 4, #reply do
          local entry = reply[n]
          -- line n - 2, not `#lines + 1` (a binary search); a kept row's table never equals the previous due
          local kind = type(entry)
          if kind == 'string' and at_lines then
            lines[n - 2] = '@' -- no text printed per timer
          elseif entry == previous then
            lines[n - 2] = '=' -- compared as numbers: no text made for it
          elseif kind == 'table' then
            lines[n - 2] = 'k' .. cjson.encode(entry)
          else
            lines[n - 2] = string.format('%d', entry - sa) -- an integer: not the float printer
            previous = entry
          end
        end
        return table.concat(lines, '\n')
      end,
      unpack = function(text)
        -- '@' lines answer their spec's `at` as sent: the specs are schedule.lua's ARGV[5], 7 + 2n elements
        -- each (n: its other fields) or, a call of plain one-shots (ARGV[7] '1'), 4; read only by a memo
        -- that has one
        local specs = string.find(text, '\n@', 1, true) and cjson.decode(ARGV[5])
        local plain = ARGV[7] == '1'
        local reply, offset, start = nil, nil, 1
        for line in string.gmatch(text, '[^\n]+') do
          if not reply then
            local sa, first = string.match(line, '^(%d+) (%d+)$')
            reply = { 'ok', tonumber(sa), tonumber(first) }
          else
            if line == '@' then
              reply[#reply + 1] = specs[start + (plain and 1 or 3)]
            elseif string.sub(line, 1, 1) == 'k' then
              reply[#reply + 1] = cjson.decode(string.sub(line, 2))
            else
              offset = line == '=' and offset or tonumber(line)
              reply[#reply + 1] = reply[2] + offset
            end
            start = specs and (plain and start + 4 or start + 7 + 2 * specs[start + 6]) or start
          end
        end
        return reply
      end,
    }
  elseif script == 'complete' then
    -- complete: a line per run, 'd' (done, no slot skipped: the usual answer), 'd<missed> <overlap>' or
    -- 's<reason>' (stale) — cjson prints each number with the C library's float printer, ~2k instructions
    -- apiece, two per run.
    return {
      pack = function(reply)
        local lines = {}
        for n, run in ipairs(reply) do
          if run[1] == 'stale' then
            lines[n] = 's' .. run[2]
          elseif run[2] == 0 and run[3] == 0 then
            lines[n] = 'd'
          else
            lines[n] = string.format('d%d %d', run[2], run[3])
          end
        end
        return table.concat(lines, '\n')
      end,
      unpack = function(text)
        local reply = {}
        for line in string.gmatch(text, '[^\n]+') do
          local missed, overlap = string.match(line, '^d(%d+) (%d+)$')
          if line == 'd' then
            reply[#reply + 1] = { 'done', 0, 0 }
          elseif missed then
            reply[#reply + 1] = { 'done', tonumber(missed), tonumber(overlap) }
          else
            reply[#reply + 1] = { 'stale', string.sub(line, 2) }
          end
        end
        return reply
      end,
    }
  elseif script == 'cancel' or script == 'cancel-all' or script == 'reschedule' or script == 'pause'
    or script == 'resume' or script == 'trigger' or script == 'backfill' then
    -- A refusal changed nothing: asked again, the script answers from the state as it is then. So are a
    -- cancel of nothing (0) and a cron occurrence not in the future ('retry'): neither is kept. A cancel
    -- that removed a kept finished row changed it: its answer, the row's status, is kept as JSON text.
    -- The writes that answer with a row (all but the cancels: `text`) reply with the text they keep, the
    -- reply array as JSON: one string instead of a RESP element per field (~15k Redis instructions a
    -- reschedule, and the client's decoding of each); a repeated call answers that text as it is. It is
    -- the text a release that decodes it keeps too, so a caller's request id repeated across a rolling
    -- upgrade reads either way.
    local text = script ~= 'cancel' and script ~= 'cancel-all'
    return {
      marked = true,
      text = text,
      pack = function(reply)
        local code = type(reply) == 'table' and reply[1]
        if reply == 0 or code == 'retry' or code == 'not-found' or code == 'inactive' then
          return nil
        end
        return cjson.encode(reply)
      end,
      unpack = function(kept)
        return text and kept or cjson.decode(kept)
      end,
    }
  end
  return nil
end

-- Whether the call with request `id` (a script with a codec) was answered and its answer kept: it ran and
-- changed what it answered.
local function request_answered(id)
  return redis.call('EXISTS', KEYS[1] .. 'q:' .. id) == 1
end

-- The codec of each script as its first call with a request made it (false: none). A function library
-- keeps it from call to call (its codecs read the call's ARGV when they run, and hold nothing of a
-- call); made per call, a codec's table and closures cost a single write ~3–5k instructions. (A script
-- run by EVAL makes it anew each call, as before.)
--- @per-load: kept from call to call on purpose (holds nothing of a call)
local codecs = {}

local function with_request(script, body)
  local prefix, id, memory_ms = string.match(ARGV[1], '^(.-)\n(.+)\n(%d+)$')
  if not prefix then
    return body()
  end
  ARGV[1] = prefix
  request.id = id
  local codec = codecs[script]
  if codec == nil then
    codec = request_codec(script) or false
    codecs[script] = codec
  end
  if not codec then
    return body()
  end
  local memo_key = KEYS[1] .. 'q:' .. id
  local memo = redis.call('GET', memo_key)
  if memo then
    -- `again`: what the first call did (counted, published, recorded) was not done now
    return codec.marked and { 'again', codec.unpack(memo) } or codec.unpack(memo)
  end
  local reply = body()
  local packed = codec.pack(reply)
  if packed then
    redis.call('SET', memo_key, packed, 'PX', memory_ms)
    if codec.text then
      return packed
    end
  end
  return reply
end
