-- Include: The reply of a run claim.lua claimed (docs/design.md "Fire path contract", "Claim"). Here, not in
-- claim.lua's body: a library makes an include's function once per load, a body's on every call.
--- @include "includes/time"

-- `row` after the claim without what the worker has or derives — `key`, `rv` (its ref's), `l` while it
-- is this claim's (started at `lf`, running; a repeated free claim's row may hold a later one:
-- `keeps_last`), and of a held run `id` (its ref's), `d` when it is the due (no `tg`), `s` (running)
-- and `hc` (= `rc`) — nor what it never reads (the lease `lw`/`lu`/`ct`, the job `j`): fewer fields for
-- cjson to encode and the worker to parse. A held one-shot's kept entries (`lq`, '' for none) come after
-- the row, as they are: its completion sends them back instead of reading its row
-- (includes/one-shot-rows). A held run that took over a dead worker's run (`requeued`) says so after
-- them (a held run of another kind: '' first). `now_micros`: the call's Redis TIME in µs.
local function claimed_reply(now_micros, code, due_text, row, rerun, keeps_last, requeued)
  -- (`+ 0`: the due is a number text this store wrote; the time left, in µs, is never negative)
  local left = int(math.max(0, (due_text + 0) * 1000 - now_micros))
  local kept = row.lq
  row.key, row.rv, row.lw, row.lu, row.ct, row.j, row.lq = nil, nil, nil, nil, nil, nil, nil
  if not keeps_last then
    row.l = nil
  end
  if code == 'held' then
    -- (the id is the ref's, the same; `d` is the due unless a trigger run's `tg` is)
    row.s, row.hc, row.id = nil, nil, nil
    if not row.tg then
      row.d = nil
    end
    if row.k == 'once' or requeued then
      return { code, due_text, left, cjson.encode(row), row.k == 'once' and kept or '', requeued }
    end
  end
  return { code, due_text, left, cjson.encode(row), rerun }
end
