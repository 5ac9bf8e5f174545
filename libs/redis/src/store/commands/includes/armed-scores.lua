-- Include: The `armed` scores of a claim call's refs (docs/design.md "Ledger", implied `armed` entry),
-- read into `ledger.armed` with one ZMSCORE when the first of its rows may fold that entry (a pending
-- row: includes/ledger-entries ledger_fold_armed): a call whose refs are all early, left to check,
-- repeated, running or gone reads none. The answers before that read move no `armed` score (a running
-- ref's `stale` folds nothing; a gone ref's folds the entry of the key's new row, if any, and marks it
-- written: the read then finds the mark), so it reads what a read at the call's start would. Here, not in
-- claim.lua's body: a library makes an include's function once per load, a body's on every call.
--- @include "includes/ledger-entries"

--- @per-call: whether this call read them
local armed_scores_read = false

-- `first`: the ARGV index of the first ref's key; each next ref's key is 3 further on (id, key, version).
local function read_armed_scores(base, first)
  if armed_scores_read or LEDGER_SIZE == 0 then
    return
  end
  armed_scores_read = true
  local refs = {}
  for i = first, #ARGV, 3 do
    refs[#refs + 1] = ARGV[i]
  end
  local scores = redis.call('ZMSCORE', base .. 'armed', unpack(refs))
  for i, key in ipairs(refs) do
    ledger.armed[key] = scores[i] or false
  end
end
