-- Include: Walking keys chunk by chunk for the key index (includes/key-index, docs/design.md "Key
-- index"): which keys of a call fall in which chunk (`P:{pN}:kx` holds the chunks' upper bounds), found
-- per chunk rather than per key, and the byte-order compare it takes. Uses no other include.

local byte = string.byte

-- Whether key `a` sorts before `b` in byte order, as Redis's lex ranges do. Not Lua's `<`, which follows
-- the server's locale (strcoll). Eight bytes per string.byte call: ~0.5 µs for two 16-byte keys.
local function key_before(a, b)
  if a == b then
    return false
  end
  local i = 1
  while true do
    local a1, a2, a3, a4, a5, a6, a7, a8 = byte(a, i, i + 7)
    local b1, b2, b3, b4, b5, b6, b7, b8 = byte(b, i, i + 7)
    -- a string that ended (nil) sorts first
    if a1 ~= b1 then
      return (a1 or -1) < (b1 or -1)
    elseif a2 ~= b2 then
      return (a2 or -1) < (b2 or -1)
    elseif a3 ~= b3 then
      return (a3 or -1) < (b3 or -1)
    elseif a4 ~= b4 then
      return (a4 or -1) < (b4 or -1)
    elseif a5 ~= b5 then
      return (a5 or -1) < (b5 or -1)
    elseif a6 ~= b6 then
      return (a6 or -1) < (b6 or -1)
    elseif a7 ~= b7 then
      return (a7 or -1) < (b7 or -1)
    elseif a8 ~= b8 then
      return (a8 or -1) < (b8 or -1)
    end
    i = i + 8
  end
end

-- Bounds are looked up KEY_BOUNDS_READ at a time: the least ones above a key.
local KEY_BOUNDS_READ = 8

-- What this script walked: the stretch each key fell in (a table: its bound and the index's
-- `generation` then) and its place in the walks. Schedule checks its keys, then adds the new ones: the
-- adds reuse the checks' stretches (no lookup, no compare). A stretch is stale once a bound is made or
-- goes: includes/key-index moves the generation on.
local generation, walked, walked_at, walk_steps = 0, {}, {}, 0

-- keys[first..] that fell, in this order, in the stretch a walk of this generation found for keys[first]:
-- their last index (nil: none).
local function walked_stretch(keys, first)
  local stretch = walked[keys[first]]
  if not stretch or stretch.generation ~= generation then
    return nil
  end
  local last = first
  while walked[keys[last + 1]] == stretch and walked_at[keys[last + 1]] >= walked_at[keys[last]] do
    last = last + 1
  end
  return last, stretch.bound
end

-- Calls visit(bound, keys, first, last) for each stretch keys[first..last] that one chunk holds (or
-- would hold: the chunk of `bound`, false for the last chunk), in turn. Keys in ascending byte order cost
-- a compare each (to the key before), the bounds above them are read KEY_BOUNDS_READ at a time, and a
-- chunk's end in the keys is found by bisection; a key below the one before it starts a new ascending
-- run, with bounds read afresh. `visit` may change the index, but only at or below its bound: the bounds
-- above it and the keys after the stretch are untouched. `remember`: the stretches found are kept for a
-- later walk (walked_stretch).
local function key_stretches(base, keys, visit, remember)
  local n, first, top = #keys, 1, 0
  local bounds, at, all_read
  while first <= n do
    local last, bound = walked_stretch(keys, first)
    if not last then
      if first > top then
        -- a new ascending run keys[first..top], its bounds not read yet
        top = first
        while top < n and not key_before(keys[top + 1], keys[top]) do
          top = top + 1
        end
        bounds, at, all_read = {}, 1, false
      end
      local key = keys[first]
      while bounds[at] and not key_before(key, bounds[at]) do
        at = at + 1
      end
      if not bounds[at] and not all_read then
        -- past the bounds read (or none read yet): the next ones above this key; fewer than asked for
        -- means none lie above them (then the last chunk)
        bounds = redis.call('ZRANGEBYLEX', base .. 'kx', '(' .. key, '+', 'LIMIT', 0, KEY_BOUNDS_READ)
        at, all_read = 1, #bounds < KEY_BOUNDS_READ
      end
      bound, last = bounds[at] or false, top
      if bound and not key_before(keys[top], bound) then
        -- keys[first] lies below the bound, keys[top] not: the last one below lies between
        local below, above = first, top
        while above - below > 1 do
          local mid = math.floor((below + above) / 2)
          if key_before(keys[mid], bound) then
            below = mid
          else
            above = mid
          end
        end
        last = below
      end
      if remember then
        local stretch = { bound = bound, generation = generation }
        for i = first, last do
          walk_steps = walk_steps + 1
          walked[keys[i]], walked_at[keys[i]] = stretch, walk_steps
        end
      end
    end
    visit(bound, keys, first, last)
    first = last + 1
  end
end

