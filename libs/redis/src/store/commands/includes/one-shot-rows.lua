-- Include: What the completion of a held one-shot run that ends ok (and removes its row) reads of it
-- (complete.lua read_settled_row): a few of a running row's ~16 fields in one HMGET cost a fraction of
-- its HGETALL (each field asked costs about as much as one returned). Every read of the row on that way
-- (complete.lua's checks, complete_held, finish, the outcome's event and ledger entry, remove_row) is of
-- these fields; any other run reads it whole.
--- @include "includes/row"

-- Not asked: `aw` — awaitTask false is refused for any timer but an interval (core validation), and a
-- row's kind never changes, so a one-shot awaits its task (no `aw`) and has no free runs; hence `hc` —
-- `rc` is its held run's runCount (claim.lua writes `hc` = `rc`, if at all); `mr` — with no `tg` and an
-- ok outcome, complete_held finishes a one-shot whether or not its runs reached maxRuns.
local ONE_SHOT_FIELDS = { 'id', 'v', 's', 'k', 'rc', 'tg', 'rm', 'd', 'lw', 'lq', 'sa' }

-- The row `key` as a held one-shot's ok completion reads it: ONE_SHOT_FIELDS only when it is a one-shot
-- removed on completion (no `tg`, not kept by removeOnComplete=false), else whole; nil when there is none.
local function read_one_shot(base, key)
  local values = redis.call('HMGET', row_key(base, key), unpack(ONE_SHOT_FIELDS))
  -- (no `id`: read whole, so a hash without one stays a row as before)
  local kind = values[4] or ROW_DEFAULTS.k
  if not values[1] or kind ~= 'once' or values[6] or values[7] == '0' then
    return read_row(base, key)
  end
  -- (one table constructor: a loop over the names costs about half of what the HMGET saves)
  return {
    key = key, id = values[1], v = values[2] or ROW_DEFAULTS.v, s = values[3] or ROW_DEFAULTS.s, k = kind,
    rc = values[5] or nil, rm = values[7] or nil, d = values[8] or nil, lw = values[9] or nil,
    lq = values[10] or nil, sa = values[11] or nil,
  }
end
