-- Include: Run policies of a held run's completion (docs/design.md "Run policies"): which try it was,
-- where its skips count from, the wait before its retry, the streak of failed slots. complete.lua.
--- @include "includes/time"

-- Which try of its slot the row's run is (`at`, retry): a trigger run is always a first.
local function attempt_of(row)
  return row.tg and 1 or tonumber(row.at or '1')
end

-- Where a held run's skips count from (`cf`: a retry's or a buffered slot's run counts after the run before
-- it, whose skips were counted), else its due.
local function count_from(row)
  return tonumber(row.cf or row.d)
end

-- How long a run that failed on try `attempt` waits for its retry (`ry` "attempts,f|e,delay[,maxDelay]",
-- the math of core retryDelay), or nil when it has no try left.
local function retry_wait(row, attempt)
  local attempts, kind, delay, max_delay = string.match(row.ry or '', '^(%d+),(%a),(%d+),?(%d*)$')
  if not attempts or attempt >= tonumber(attempts) then
    return nil
  end
  local wait = tonumber(delay)
  if kind == 'e' then
    wait = wait * 2 ^ (attempt - 1)
  end
  if max_delay ~= '' then
    wait = math.min(wait, tonumber(max_delay))
  end
  return wait
end

-- pauseAfterFailures: the run's outcome extends (`fs` in `fields`) or ends (`fs` in `gone`) the streak of
-- failed slots. Returns the streak when it reaches `pf` and the timer is to pause.
local function count_failure(row, outcome, fields, gone)
  if not row.pf then
    return nil
  end
  if outcome == 'ok' then
    gone[#gone + 1] = 'fs'
    return nil
  end
  local streak = tonumber(row.fs or '0') + 1
  fields.fs = int(streak)
  return (streak >= tonumber(row.pf) and row.s ~= 'paused') and streak or nil
end
