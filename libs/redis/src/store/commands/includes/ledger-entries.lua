-- Include: The ledger's entries as text and the ones a row keeps for its next ledger write (`lq`; the
-- list itself: includes/ledger): the fire path's per-timer entries joined from integer texts, the kept
-- entries of a hand-off and a claim, and the `armed` entry a handed-off row implies (docs/design.md
-- "Ledger").
--- @include "includes/time"

-- `worker`: the worker a claim acts for (claim.lua), or that ran the run a completion settles (complete.lua,
-- per run): its entries name it, else a run's entries name the row's lease owner (`lw`, ledger_record).
-- `created`: the keys of the rows this call created (all at `created_at`), for `ledger_write_created`.
-- `at`, `at_text`: the last ms an outcome entry was made at, and its text; `by`, `by_json`: the last
-- worker one named, and its JSON (completed_entry: a batch's runs mostly share both). `armed`: key → its
-- `armed` score as this call read it (false: none, or folded already; ledger_fold_armed). `opened`,
-- `opened_sa`: the key whose `sa` the call moves, and its `sa` before (includes/ledger, a reschedule).
-- The fields that start nil are left out of the constructor: Lua sizes a table's hash part by every
-- field a constructor names, nil or not, and this one is made on every call (−8k instructions a cancel).
--- @per-call: this call's worker, created rows, last entry and armed scores
local ledger = { created = {}, armed = {} }

local function ledger_entry(at, event, version, fields)
  local entry = { a = at, e = event, v = tonumber(version) }
  for field, value in pairs(fields or {}) do
    entry[field] = value
  end
  return cjson.encode(entry)
end

-- The fire path's entries made per timer — a first hand-off's implied `scheduled`, the hand-off's `armed`,
-- a held claim's `claimed` — joined in one concatenation from the integer texts the script already holds
-- (`sa`, Redis ms, the row's version, a `due` score or field; `worker_json` is cjson.encode of the worker
-- id, made once per call): building and cjson-encoding a table costs Redis several times as much. The
-- same JSON as `ledger_entry` (field order is not part of it).
local function scheduled_entry(sa)
  if type(sa) ~= 'string' then
    return ledger_entry(tonumber(sa), 'scheduled', 1)
  end
  return '{"a":' .. sa .. ',"e":"scheduled","v":1}'
end

local function armed_entry(at, version, due)
  return '{"a":' .. at .. ',"e":"armed","v":' .. version .. ',"d":' .. due .. '}'
end

local function claimed_entry(at, version, worker_json, due)
  return '{"a":' .. at .. ',"e":"claimed","v":' .. version .. ',"w":' .. worker_json .. ',"d":' .. due .. '}'
end

-- A held run's plain `completed` entry (no reason, error, count), the same way; `at` is a number (the
-- script's now: made text once per call), `worker` the row's lease owner or nil.
local function completed_entry(at, version, due, worker)
  if ledger.at ~= at then
    ledger.at, ledger.at_text = at, int(at)
  end
  if worker and ledger.by ~= worker then
    ledger.by, ledger.by_json = worker, ',"w":' .. cjson.encode(worker)
  end
  local by = worker and ledger.by_json or ''
  return '{"a":' .. ledger.at_text .. ',"e":"completed","v":' .. version .. ',"d":' .. due .. by .. '}'
end

-- The entries a row keeps (`lq`, oldest first, one per line: compact JSON escapes every newline) for the
-- ledger's next write: `row.lq` with `entry` after it, what the caller writes to the row's `lq` field.
local function ledger_defer(row, entry)
  if LEDGER_SIZE == 0 then
    return nil
  end
  return row.lq and (row.lq .. '\n' .. entry) or entry
end

-- Whether kept entries (`lq`) hold the row's 'scheduled' entry (its first hand-off put it there).
local function keeps_first_entry(kept)
  return kept ~= nil and string.find(kept, '"e":"scheduled"', 1, true) ~= nil
end

-- The `lq` a hand-off (take-due) leaves on `row` (its fields v, rc, sa, lq, lo): its `armed` entry after
-- what the row keeps. A row's first hand-off (version 1, no run yet, nothing kept) finds nothing of it in
-- the ledger — unless its creation wrote its 'scheduled' entry into an earlier life's ledger, which marks
-- the row `lo` (ledger_write_created) — so that implied entry goes first, and the completion's one LPUSH
-- writes the whole ledger (no RPUSH of it underneath).
local function ledger_hand_off(row, entry)
  if LEDGER_SIZE > 0 and not row.lq and row.v == '1' and not row.rc and not row.lo then
    return scheduled_entry(row.sa) .. '\n' .. entry
  end
  return ledger_defer(row, entry)
end

-- The hand-off (take-due) writes no entry: a pending row in `armed` implies its `armed` entry — at its
-- `armed` score (the hand-off ms), its version, its effective due (`tg` or `d`: nothing changes them
-- while it stays armed) — until its ledger is written or it leaves `armed`, and then that entry goes
-- first, into `row.lq` (with the implied `scheduled` of a first hand-off: ledger_hand_off). A script that
-- takes a row out of `armed` without writing its ledger saves `lq` with the row. Not implied: a score
-- with a fraction (`<ms>.5`: ledger_append wrote it and the row stayed armed), or one whose entry `lq`
-- holds already, or a row naming its job (`j`: a release before this one handed it off and kept that
-- entry itself, in `lq` or the list; take-due drops `j` when it hands the row off again). Needs the row's
-- key, s, j, v, d, tg, rc, lo, lq, sa. The score to fold, or false (either way it is not folded again);
-- and, when this call read `armed` for it, whether `armed` holds the key (nil: not read): its caller then
-- knows whether a ZREM from `armed` has anything to remove.
local function armed_score_to_fold(row)
  if LEDGER_SIZE == 0 or row.s ~= 'pending' or row.j then
    return false
  end
  local score, read = ledger.armed[row.key], nil
  if score == nil then
    score = redis.call('ZSCORE', KEYS[1] .. 'armed', row.key)
    read = score ~= false
  end
  ledger.armed[row.key] = false
  if not score or string.find(score, '.', 1, true) then
    return false, read
  end
  if row.lq and string.find(row.lq, '{"a":' .. score .. ',"e":"armed"', 1, true) then
    return false, read
  end
  return score, read
end

-- Folds the implied `armed` entry into `row.lq`; returns what armed_score_to_fold does (the score
-- folded, or false; whether `armed` holds the key when this call read it).
local function ledger_fold_armed(row)
  local score, read = armed_score_to_fold(row)
  if score then
    row.lq = ledger_hand_off(row, armed_entry(score, row.v, row.tg or row.d))
  end
  return score, read
end

-- A held claim's kept entries (what it writes to `lq`; nil with the ledger off): the row's, its implied
-- `armed` entry folded (as ledger_fold_armed) and its `claimed` entry (claimed_entry: at `at`, by
-- `worker_json`, of the due text `due`, the row's `tg` or `d`) after them. A first hand-off's (the
-- implied `scheduled` first) and a row keeping nothing are one concatenation each: the same text as
-- ledger_defer after ledger_fold_armed, without the four strings and calls between (~7k instructions a
-- claim with the collector's share, docs/design.md "Redis time per fired timer").
local function ledger_keep_claimed(row, at, worker_json, due)
  local score = armed_score_to_fold(row)
  if not score then
    return ledger_defer(row, claimed_entry(at, row.v, worker_json, due))
  end
  local v = row.v
  if not row.lq then
    if v == '1' and not row.rc and not row.lo and type(row.sa) == 'string' then
      return '{"a":' .. row.sa .. ',"e":"scheduled","v":1}\n{"a":' .. score .. ',"e":"armed","v":1,"d":' .. due
        .. '}\n{"a":' .. at .. ',"e":"claimed","v":1,"w":' .. worker_json .. ',"d":' .. due .. '}'
    end
    if not (v == '1' and not row.rc and not row.lo) then
      return '{"a":' .. score .. ',"e":"armed","v":' .. v .. ',"d":' .. due .. '}\n{"a":' .. at
        .. ',"e":"claimed","v":' .. v .. ',"w":' .. worker_json .. ',"d":' .. due .. '}'
    end
  end
  row.lq = ledger_hand_off(row, armed_entry(score, v, due))
  return ledger_defer(row, claimed_entry(at, v, worker_json, due))
end

-- The `armed` entry folded at `score` is written and its row stays armed: its score says so (`.5`).
local function ledger_mark_armed(key, score)
  if score then
    redis.call('ZADD', KEYS[1] .. 'armed', 'XX', score .. '.5', key)
  end
end
