-- Repartition, step 3 of 3, on the partition a key left (docs/design.md "Repartition"): deletes the
-- moving records step 1 made, once step 2 wrote them in their new partition. Safe to repeat.
-- Input:
--   KEYS[1] base of the partition the keys left 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2..] keys
-- Output: the number of moving records deleted

local base = KEYS[1]
local names = {}
for i = 2, #ARGV do
  names[#names + 1] = base .. 'm:' .. ARGV[i]
  names[#names + 1] = base .. 'mx:' .. ARGV[i]
  names[#names + 1] = base .. 'mh:' .. ARGV[i]
end
if #names == 0 then
  return 0
end
return redis.call('DEL', unpack(names))
