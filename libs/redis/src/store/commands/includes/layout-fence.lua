-- Include: The layout fence (docs/design.md "Repartition"). The loader puts this first in every script.
-- A store write (schedule, cancel, ...) sends ARGV[1] as '#<partition count>#' before the prefix: the
-- count its caller spreads keys over. A repartition writes the count that may now write a partition into
-- `P:{pN}:layout`; a write from a process with another count is refused (a key it wants may be elsewhere
-- now, and a row it creates here would be a second live row), with an error reply
-- 'SUNDIAL_LAYOUT <count>'. The fire path sends no count: it acts on rows where they are, so it is never
-- fenced. No `layout` key (never repartitioned): no fence. Uses no other include.
do
  local caller_count, rest = string.match(ARGV[1], '^#(%d+)#(.*)$')
  if caller_count then
    ARGV[1] = rest
    local allowed = redis.call('GET', KEYS[1] .. 'layout')
    if allowed and allowed ~= caller_count then
      return redis.error_reply('SUNDIAL_LAYOUT ' .. allowed)
    end
  end
end
