-- Include: Slot policies (docs/spec.md §3.3c): jitter, and which rows the worker steps by core's slot rule.
--- @include "includes/time"

-- 32-bit FNV-1a of `text`, the same number as core fnv1a32. In doubles: h·16777619 mod 2^32 =
-- (h·403 + (h mod 256)·2^24) mod 2^32, every term exact below 2^53.
local function fnv1a32(text)
  local hash = 2166136261
  for i = 1, #text do
    hash = bit.bxor(hash, string.byte(text, i))
    if hash < 0 then
      hash = hash + 4294967296
    end
    hash = (hash * 403 + (hash % 256) * 16777216) % 4294967296
  end
  return hash
end

-- When `slot` is due: moved by the row's jitter (`jt`) by fnv1a32(key|slot) mod jitter, as core dueOfSlot.
local function slot_due(row, slot)
  if not row.jt then
    return slot
  end
  return slot + fnv1a32(row.key .. '|' .. int(slot)) % tonumber(row.jt)
end

-- The slot the row's `d` stands for: `ds` when jitter moved `d`.
local function slot_of(row)
  return tonumber(row.ds or row.d)
end

-- Sets `fields.d` (and `ds` under jitter) for `slot`; returns the due.
local function arm_slot_fields(row, fields, slot)
  local due = slot_due(row, slot)
  fields.d = int(due)
  if row.jt then
    fields.ds = int(slot)
  end
  return due
end

-- A row the worker steps by core's slot rule (catchup, window, jitter, startAt, endAt: core hasSlotPolicy):
-- complete.lua takes its next slot from the completion instead of counting an interval's grid itself.
local function has_slot_policy(row)
  return row.cu ~= nil or row.cw ~= nil or row.jt ~= nil or row.st ~= nil or row.ea ~= nil
end
