-- Include: What the completion of a held one-shot run that ends ok (and removes its row) reads of it
-- (complete.lua read_settled_row): a few of a running row's ~16 fields in one HMGET cost a fraction of
-- its HGETALL (each field asked costs about as much as one returned). Every read of the row on that way
-- (complete.lua's checks, complete_held, finish, the outcome's event and ledger entry, remove_row) is of
-- these fields; any other run reads it whole. A run whose worker sends its claim's copy of them
-- (`claimed_copies`) reads none.
--- @include "includes/row"
--- @include "includes/live-ids"

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

-- A run sent as [id, key, version, runCount, lease end, d, sa, n] (complete.lua's header): a held
-- one-shot ending ok with nothing else to say, and its claim's copy of its row.
local COPY_RUN_LENGTH = 8

-- The rows of a batch's held one-shot runs ending ok that need no read (key → row table, as
-- read_one_shot would give it): the worker sends what its claim replied (a run of COPY_RUN_LENGTH: the
-- lease's end, the due `d`, `sa`, n: the kept entries `lq` or '' are ARGV[3 + n]; ARGV[3] itself, `lw` —
-- arguments of their own, not escaped into the runs' JSON), and that is still the row while
-- the run's id is live (the row holds it: no cancel or replace) and its lease scores exactly the claim's
-- end. Within an id's life each claim's lease ends strictly later than any before it (a claim again comes
-- only after the last expired), and nothing but a claim writes an integer score (a renewal and a ledger
-- write that takes the row's kept entries mark it: includes/leases, includes/ledger
-- ledger_mark_lease), so that score says no other write came between. Any other run, or a key the batch
-- names twice, is read.
local function claimed_copies(base, runs)
  local count, candidates = {}, {}
  for i = 1, #runs do
    local run = runs[i]
    local key = run[2]
    count[key] = (count[key] or 0) + 1
    if #run == COPY_RUN_LENGTH then
      candidates[#candidates + 1] = run
    end
  end
  local copies, keys, ids, checked = {}, {}, {}, {}
  for i = 1, #candidates do
    local run = candidates[i]
    if count[run[2]] == 1 then
      checked[#checked + 1] = run
      keys[#keys + 1] = run[2]
      ids[#ids + 1] = run[1]
    end
  end
  if #keys == 0 then
    return copies
  end
  local scores = redis.call('ZMSCORE', base .. 'leases', unpack(keys))
  local live = live_ids_among(base, ids)
  for i = 1, #checked do
    local run = checked[i]
    if scores[i] == run[5] and live[run[1]] then
      local kept = ARGV[3 + run[8]]
      copies[run[2]] = {
        key = run[2], id = run[1], v = run[3], s = 'running', k = 'once', rc = run[4], d = run[6],
        sa = run[7], lq = kept ~= '' and kept or nil, lw = ARGV[3],
      }
    end
  end
  return copies
end
