-- Pauses a pending timer: ARGV[2] key. Version + 1 (any job in flight turns stale), out of due/armed.
-- Pausing a paused timer changes nothing; a running one is refused 'inactive' (its run owns the row).
local base, prefix = KEYS[1], ARGV[1]
local key = ARGV[2]
local row, refusal = live_row_for(base, key, { running = true })
if not row then
  return refusal
end
if row.s == 'pending' then
  abort_runs(prefix, row)
  bump_version(row)
  row.s = 'paused'
  row.tg = nil
  save_row(base, row)
  redis.call('ZREM', base .. 'due', key)
  redis.call('ZREM', base .. 'armed', key)
end
return reply('ok', row)
