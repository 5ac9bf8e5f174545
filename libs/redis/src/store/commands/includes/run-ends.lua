-- Include: What a completion writes of a run's end (complete.lua, docs/spec.md §3.2 step 4): `last`, the
-- outcome's event (its ledger entry: includes/ledger) with the fields it writes on a row that stays, and
-- where a backfill goes on after its slot's run.
--- @include "includes/time"
--- @include "includes/events"
--- @include "includes/slots"
--- @include "includes/run-policies"

-- What `last` records (docs/spec.md §3.2): the run's start and end (`now`), and the error of a failed or
-- lost run.
local function last_run(now, row, outcome, message, reason)
  local last = { started = tonumber(row.lf), ended = now, status = outcome == 'ok' and 'ok' or 'failed' }
  if outcome ~= 'ok' then
    last.error = { message = message, reason = reason ~= '' and reason or nil }
  end
  return last
end

-- The outcome's event, and the fields it writes when the row stays (`l` and `lc` or `le`). `ended`: why
-- the run ended its timer unasked ('no-next-slot', 'ended', 'max-runs'), carried by the event as its reason.
local function outcome_of(prefix, now, row, version, outcome, message, reason, ended)
  local last = last_run(now, row, outcome, message, reason)
  local attempt = outcome ~= 'ok' and attempt_of(row) or nil
  publish_event(prefix, row, outcome == 'ok' and 'completed' or 'failed', now, { version = tonumber(version), error = last.error, reason = ended, attempt = attempt })
  local fields = { l = cjson.encode(last) }
  fields[outcome == 'ok' and 'lc' or 'le'] = int(now)
  return fields
end

-- A backfill in progress (`bf`: the slots after the armed one, `bs`: the slot to go back to): the next
-- backfill slot runs at once, due at itself; after the last, the schedule goes on at `bs` (a run
-- reschedule moved, `mv`, or a pending retry, `bt` its try, at its own due) with the `at` and `cf` it had
-- (`bt`, `bc`: backfill.lua). Returns its due, and adds the fields it drops to `gone`.
local function next_backfill(now, row, fields, gone)
  local rest = cjson.decode(row.bf)
  if #rest > 0 then
    fields.d = int(table.remove(rest, 1))
    fields.bf = #rest > 0 and cjson.encode(rest) or '[]'
    fields.ba = int(now) -- asked for now: its lateness counts from here (backfill.lua)
    gone[#gone + 1] = 'ds'
    return tonumber(fields.d)
  end
  for _, field in ipairs({ 'bf', 'bs', 'ba', 'bt', 'bc' }) do
    gone[#gone + 1] = field
  end
  -- (a backfill run's retry left its own `at` and `cf`: the caller drops `at` with the lease fields)
  fields.at, fields.cf = row.bt, row.bc
  if row.bt then
    for i = #gone, 1, -1 do
      if gone[i] == 'at' then
        table.remove(gone, i)
      end
    end
  end
  if not row.bc then
    gone[#gone + 1] = 'cf'
  end
  if row.mv or row.bt then
    -- the run reschedule moved (`mv`, kept), or a retry: its own due, no slot, so no jitter (docs/spec.md §3.3c)
    fields.d = row.bs
    gone[#gone + 1] = 'ds'
    return tonumber(row.bs)
  end
  return arm_slot_fields(row, fields, tonumber(row.bs))
end
