-- Reads keys of the partition's key index in lexicographic order (includes/key-index): what `list` and
-- a repartition's scan page through. Changes nothing.
-- Input:
--   KEYS[1] partition base 'P:{pN}:'
--   ARGV[1] prefix 'P', ARGV[2] min, ARGV[3] max (ZRANGEBYLEX's notation: '-', '+', '[key', '(key'),
--   ARGV[4] the most keys to return
-- Output: the keys from min to max, at most ARGV[4], in order

--- @include "includes/key-index"

return key_index_range(KEYS[1], ARGV[2], ARGV[3], tonumber(ARGV[4]))
