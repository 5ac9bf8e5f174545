-- Include: Redis time as epoch ms, integers as text, the interval grid.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Redis time in µs, an integer (exact in a double): for a wait to a due that must not end early by the
-- fraction of a ms now_ms drops (claim's leftUs). ⌊now_us() / 1000⌋ is now_ms().
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Integer to string without exponent notation (tostring(1.7e12) would give '1.7e+12'). An integral
-- value goes through '%d' (an integer print): '%.0f', kept for a fraction (it rounds), runs the C
-- library's float printer, ~1.5k instructions a value — the fire path prints several per timer.
local function int(n)
  if n % 1 == 0 then
    return string.format('%d', n)
  end
  return string.format('%.0f', n)
end

-- Where a look for a slot after `now` starts: none comes before the row's startAt (`st`), as core
-- fromStart (docs/spec.md §3.3c: a run rescheduled before startAt is followed by its first slot).
local function from_start(row, now)
  return row.st and math.max(now, tonumber(row.st) - 1) or now
end

-- An interval's next due: the first grid slot anchor + k·every strictly after now, k ≥ 1, not before
-- startAt (the same math as core slotAfter). Used by resume and by the fire path (claim of a free run,
-- complete).
local function next_grid_slot(row, now)
  now = from_start(row, now)
  local anchor, every = tonumber(row.sa), tonumber(row.em)
  local k = math.max(1, math.floor((now - anchor) / every) + 1)
  return anchor + k * every
end

-- The grid slots strictly between a run's `due` and the `next_due` armed after it, split at `started`:
-- missed (passed before the run started) and overlap (came while it went on). The same math as core
-- gridSkips, none before startAt (a run moved before it went past no slot). Used by complete (held runs)
-- and claim (free runs, where started is the claim).
local function grid_skips(row, due, started, next_due)
  due = from_start(row, due)
  local anchor, every = tonumber(row.sa), tonumber(row.em)
  local last_before_next = math.ceil((next_due - anchor) / every) - 1
  local at_due = math.floor((due - anchor) / every)
  local at_start = math.min(math.max(math.floor((started - anchor) / every), at_due), last_before_next)
  return math.max(0, at_start - at_due), math.max(0, last_before_next - at_start)
end
