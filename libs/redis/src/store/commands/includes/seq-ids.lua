-- Include: the ids schedule.lua gives its rows, `<seq>p<partition>` (docs/design.md "Live ids"), made
-- without a `string.format` each: a run of consecutive seqs shares all digits but the last two, so an
-- id is one concatenation of the run's head, two digits from a table and the partition's suffix
-- (`string.format('%dp%s')` per row measured ~2.9k instructions a timer; docs/design.md "scheduleMany").

-- '00' .. '99', the last two digits after a head: a literal, made when the library loads and never written
local TWO_DIGITS = {
  '00', '01', '02', '03', '04', '05', '06', '07', '08', '09',
  '10', '11', '12', '13', '14', '15', '16', '17', '18', '19',
  '20', '21', '22', '23', '24', '25', '26', '27', '28', '29',
  '30', '31', '32', '33', '34', '35', '36', '37', '38', '39',
  '40', '41', '42', '43', '44', '45', '46', '47', '48', '49',
  '50', '51', '52', '53', '54', '55', '56', '57', '58', '59',
  '60', '61', '62', '63', '64', '65', '66', '67', '68', '69',
  '70', '71', '72', '73', '74', '75', '76', '77', '78', '79',
  '80', '81', '82', '83', '84', '85', '86', '87', '88', '89',
  '90', '91', '92', '93', '94', '95', '96', '97', '98', '99',
}

-- The id maker of one call in partition `partition` (its number as text): ids(seq) for ascending seqs.
local function seq_ids(partition)
  local hundred, head = -1, ''
  return function(seq)
    if seq < 100 then
      return string.format('%dp%s', seq, partition) -- the first 99 ids of a partition: no head
    end
    local last = seq % 100
    if seq - last ~= hundred then
      hundred = seq - last
      head = string.format('%d', hundred / 100)
    end
    return head .. TWO_DIGITS[last + 1] .. 'p' .. partition -- one concatenation
  end
end
