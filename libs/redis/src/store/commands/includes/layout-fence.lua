-- Include: The layout fence (docs/design.md "Repartition"). The loader puts this first in every script.
-- A store write (schedule, cancel, ...) sends ARGV[1] as '#<partition count>k#' before the prefix: the
-- count its caller spreads keys over, and 'k' for the chunked key index (includes/key-index). A
-- repartition writes the value that may now write a partition into `P:{pN}:layout`; a write from a
-- process with another value is refused (a key it wants may be elsewhere now, and a row it creates here
-- would be a second live row), with an error reply 'SUNDIAL_LAYOUT <value>'. A process of a version
-- before the key index sends '#<count>#', which never matches: migrate-keys.lua marks every partition
-- with the 'k' value when it converts the old `keys` zset, so those processes' writes are refused. The fire path sends no count: it acts on rows where they are, so it is never
-- fenced. No `layout` key (never repartitioned): no fence. Uses no other include.
do
  local caller_count, rest = string.match(ARGV[1], '^#(%d+k)#(.*)$')
  if caller_count then
    ARGV[1] = rest
    local allowed = redis.call('GET', KEYS[1] .. 'layout')
    if allowed and allowed ~= caller_count then
      return redis.error_reply('SUNDIAL_LAYOUT ' .. allowed)
    end
  end
end
