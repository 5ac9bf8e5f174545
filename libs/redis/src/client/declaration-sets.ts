import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';

// Why a file of its own: during a rolling deploy, replicas of two builds of one app run side by side, and
// each declares its own @DistributedCron / @DistributedInterval rows. Only the replicas of the newest
// declaration set may write them (docs/spec.md §5.1): this is where the sets are announced and the newest
// one is told, in one script on one key (one slot on a Redis Cluster), on Redis's clock.

/** How long a set, no longer announced, is remembered before it counts as new again (a rollback to it). */
export const DECLARATION_SET_MEMORY_MS = 3_600_000;

/**
 * What a replica asks with its announcement: `boot` (and after a reset) runs its pass whenever its set is
 * the newest; `refresh` only when the last pass begun is not its set's (the newer replicas are gone, or a
 * pass was undone). `done` says its pass ended, `failed` that it stopped half way: either undoes the mark
 * when the pass may not be the last word (it failed, or another set's pass began meanwhile and the writes
 * of the two may have crossed), so that the newest set's next refresh runs its pass again. `withdrawn`:
 * the replica's app did not start after all (its listen failed): its set stops counting as live at once
 * (its first-seen time kept), and the mark of its pass is undone, so that the set that is the newest
 * without it writes its rows again at its next refresh rather than defer to a replica that is not running.
 */
export type DeclarationStep = 'boot' | 'refresh' | 'done' | 'failed' | 'withdrawn';

export interface DeclarationTurn {
  /** the set hash of the newest live set (first seen latest; ties by hash) */
  newest: string;
  /** when this set was first seen (Redis ms): given back at each announcement, so a lost key keeps the order */
  firstSeen: number;
  /** whether this replica runs its pass now (this step marked it begun) */
  pass: boolean;
}

/**
 * KEYS[1] `P:cron-sets:<app>`, a hash: `s:<set>` → `<first seen ms>:<announced until ms>`, and `pass` → the
 * set whose pass began last (none: undone). ARGV: set, live ms, memory ms, step, first seen as known ('' none).
 * Returns { newest set, first seen of this one, 1 when this replica runs its pass now }.
 */
const LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key, mine, live, memory, step = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local field = 's:' .. mine
local first = tonumber(ARGV[5]) or now
local newest, latest = false, -1
local last = false
local entries = redis.call('HGETALL', key)
for i = 1, #entries, 2 do
  local name, value = entries[i], entries[i + 1]
  local sep = string.find(value, ':', 1, true)
  if name == 'pass' then
    last = value
  elseif sep then
    local seen, lasts = tonumber(string.sub(value, 1, sep - 1)), tonumber(string.sub(value, sep + 1))
    if lasts + memory < now then
      redis.call('HDEL', key, name)
    elseif name == field then
      first = seen
    elseif lasts >= now then
      local set = string.sub(name, 3)
      if seen > latest or (seen == latest and set > newest) then newest, latest = set, seen end
    end
  end
end
if step == 'withdrawn' then
  redis.call('HSET', key, field, string.format('%d:%d', first, now - 1))
  if last == mine then redis.call('HDEL', key, 'pass') end
  redis.call('PEXPIRE', key, live + memory)
  return { newest or '', string.format('%d', first), 0 }
end
if not newest or first > latest or (first == latest and mine > newest) then newest = mine end
redis.call('HSET', key, field, string.format('%d:%d', first, now + live))
local run = 0
if step == 'done' or step == 'failed' then
  -- another set's pass began since this one's (their writes may have crossed): the newest redoes its pass
  if step == 'failed' or last ~= mine then redis.call('HDEL', key, 'pass') end
elseif newest == mine and (step == 'boot' or last ~= mine) then
  redis.call('HSET', key, 'pass', mine)
  run = 1
end
redis.call('PEXPIRE', key, live + memory)
return { newest, string.format('%d', first), run }
`;

const COMMAND = 'sundial_cron_sets';

type CronSetsCommand = (key: string, ...args: string[]) => Promise<[string, string, number]>;

/** The declaration sets of the apps on one connection (RedisTimers' `declarationTurn`). */
export class DeclarationSets {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {
    // EVALSHA, EVAL when Redis does not know it yet: both in the documented ACL user's commands.
    if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: LUA });
  }

  /**
   * Announces `set` as declared by a replica of `app` for `liveMs` (one round trip: the script above), and
   * says which set is the newest and whether this replica runs its pass now.
   */
  async announce(
    app: string,
    set: string,
    step: DeclarationStep,
    liveMs: number,
    knownFirstSeen?: number,
  ): Promise<DeclarationTurn> {
    const command = (this.redis as unknown as Record<string, CronSetsCommand>)[COMMAND];
    const [newest, firstSeen, pass] = await command.call(
      this.redis,
      this.keys.cronSets(app),
      set,
      String(liveMs),
      String(DECLARATION_SET_MEMORY_MS),
      step,
      knownFirstSeen === undefined ? '' : String(knownFirstSeen),
    );
    return { newest, firstSeen: Number(firstSeen), pass: pass === 1 };
  }
}
