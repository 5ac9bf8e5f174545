-- Pauses a pending timer: version + 1 (any job in flight turns stale), out of due/armed. Pausing a
-- paused timer changes nothing; a running one is refused 'inactive' (its run owns the row).
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] key
--   ARGV[1] may carry a request after the prefix (includes/requests): a repeated call answers
--   `{ 'again', <the first answer> }`; with one, an 'ok' comes as the JSON text of its array, the text
--   it keeps
-- Output: { 'ok', row as pairs } | { 'not-found' (, 's', ended status) } | { 'inactive', row as pairs }

--- @include "includes/time"
--- @include "includes/row"
--- @include "includes/indexes"
--- @include "includes/events"
--- @include "includes/requests"
--- @include "includes/scope-records"

local base, prefix = KEYS[1], ARGV[1]
local key = ARGV[2]
-- a cancelAll's scope record covering the key applies first (includes/scope-records)
settle_scopes(base, prefix, { key })
local row, refusal = live_row_for(base, key, { running = true })
if not row then
  return refusal
end
if row.s == 'pending' then
  abort_runs(prefix, row)
  -- its implied `armed` entry (includes/ledger) goes with the row's kept ones: it leaves `armed`
  ledger_fold_armed(row)
  bump_version(row)
  row.s = 'paused'
  row.tg = nil
  -- a backfill in progress ends here (docs/spec.md §3.3c)
  row.bf, row.bs, row.ba, row.bt, row.bc = nil, nil, nil, nil, nil
  save_row(base, row)
  ledger_append(row, 'paused', now_ms())
  redis.call('ZREM', base .. 'due', key)
  redis.call('ZREM', base .. 'armed', key)
end
return reply('ok', row)
