-- Include: the ids schedule.lua gives its rows, `<seq>p<partition>` (docs/design.md "Live ids"), made
-- without a `string.format` each: a run of consecutive seqs shares all digits but the last two, so an
-- id is one concatenation of the run's head, two digits from a table and the partition's suffix
-- (`string.format('%dp%s')` per row measured ~2.9k instructions a timer; docs/design.md "scheduleMany").

-- '00' .. '99' after a head; '0' .. '99' for the seqs below 100, which have none. Filled by the first
-- call (a library's load may not use `string`); as a Redis Function they live on from call to call.
local TWO_DIGITS, LAST_DIGITS = {}, {}

-- The id maker of one call in partition `partition` (its number as text): ids(seq) for ascending seqs.
local function seq_ids(partition)
  if not TWO_DIGITS[1] then
    for n = 0, 99 do
      LAST_DIGITS[n + 1] = string.format('%d', n)
      TWO_DIGITS[n + 1] = string.format('%02d', n)
    end
  end
  local suffix, hundred, head = 'p' .. partition, -1, ''
  return function(seq)
    local last = seq % 100
    if seq - last ~= hundred then
      hundred = seq - last
      head = hundred == 0 and '' or string.format('%d', hundred / 100)
    end
    return head .. (hundred == 0 and LAST_DIGITS or TWO_DIGITS)[last + 1] .. suffix
  end
end
