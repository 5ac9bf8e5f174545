-- Include: Redis time as epoch ms, integers as text, the interval grid.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integer to string without exponent notation (tostring(1.7e12) would give '1.7e+12').
local function int(n)
  return string.format('%.0f', n)
end

-- An interval's next due: the first grid slot anchor + k·every strictly after now, k ≥ 1 (the same
-- math as core nextGridSlot). Used by resume and by the fire path (claim of a free run, complete).
local function next_grid_slot(row, now)
  local anchor, every = tonumber(row.sa), tonumber(row.em)
  local k = math.max(1, math.floor((now - anchor) / every) + 1)
  return anchor + k * every
end
