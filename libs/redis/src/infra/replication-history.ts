import { Redis } from 'ioredis';
import type { SundialKeys } from '../store/keys';
import { closeRedis, primaries, type RedisClient, withErrorListener } from './connection';
import { publishReset } from './data-marker';
import { writesLost, type WritesLost } from './writes-lost';

/** What one look read of a primary: `INFO replication persistence`. */
interface Look {
  offset: number;
  /** `rdb_changes_since_last_save`: keys changed since its last save (a save resets it) */
  changes: number;
  at: number;
  /** host:port as this process reached it */
  address: string;
}

interface Primary {
  role: string;
  replid: string;
  replid2: string;
  offset: number;
  /** the first offset of `replid2`'s history the primary does NOT hold (-1: none) */
  secondOffset: number;
  changes: number;
}

/**
 * How long looks are kept: Sentinel promotes a replica whose link was down up to ten times
 * `down-after-milliseconds` (300 s by default), and the look before it went down is the one that counts.
 * A history not looked at for this long (its primary gone without a successor seen) is forgotten.
 */
const KEEP_MS = 10 * 60_000;
/** How long the old primary is given to answer once a fork is found. */
const OLD_PRIMARY_WAIT_MS = 1_000;

/**
 * A failover to a replica that lagged (Sentinel, Redis Cluster) drops the writes the old primary had
 * acknowledged and the replica had not received, keeping every data marker (data-marker.ts): no marker
 * tells of it. Each look reads `INFO replication persistence` of the primary (on a Redis Cluster, of each
 * primary) and remembers, by replication id, the offsets seen. A promoted replica keeps the old
 * primary's id as `master_replid2`, with `second_repl_offset` the first byte of that history it does not
 * hold: a look that saw the old primary past it saw writes the new primary lacks. The old primary, still
 * reachable at its address and not yet demoted, is asked once for its final offset (the writes it took
 * between the promotion and the processes' move, §4.7). Sentinel's own hellos and replication pings add to
 * the stream too: the keys changed (`rdb_changes_since_last_save`) since the last look the new primary
 * holds tell whether any data changed past it; none changed, nothing is said. The first process to tell
 * a fork publishes a `reset` (`count` 0), as for a loss of data.
 */
export class ReplicationHistory {
  /** replication id → the last looks at that primary, oldest first */
  private readonly seen = new Map<string, Look[]>();
  /** whether the last check found a primary of a history this process had not seen, nor one promoted from it */
  private restartedSeen = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /** Resolves the losses found (one per fork, once); rejects when Redis does not answer. */
  async check(): Promise<WritesLost[]> {
    const nodes = await primaries(this.redis);
    const read = await Promise.all(nodes.map(async (node) => ({ node, primary: await readPrimary(node) })));
    const losses: WritesLost[] = [];
    const now = Date.now();
    this.restartedSeen = false;
    for (const { node, primary } of read) {
      if (primary.role !== 'master') continue;
      if (!this.seen.has(primary.replid) && !this.seen.has(primary.replid2)) this.restartedSeen = true;
      const loss = await this.forkLoss(primary);
      if (loss) losses.push(loss);
      this.remember(primary.replid, { ...primary, at: now, address: addressOf(node) });
    }
    for (const [replid, looks] of this.seen)
      if (now - looks[looks.length - 1].at > KEEP_MS) this.seen.delete(replid);
    return losses;
  }

  /**
   * Adds a look to its history, keeping of a run of looks with the same changes its first and its last
   * (a fork between them counts the same changes from either), and none older than KEEP_MS but the last.
   */
  private remember(replid: string, { offset, changes, at, address }: Look): void {
    const looks = this.seen.get(replid) ?? [];
    const [beforeLast, last] = looks.slice(-2);
    if (beforeLast?.changes === changes && last?.changes === changes) looks.pop();
    looks.push({ offset, changes, at, address });
    while (looks.length > 1 && at - looks[0].at > KEEP_MS) looks.shift();
    this.seen.set(replid, looks);
  }

  /**
   * Whether the last check found a primary (re)started since the check before: a history this process had
   * not seen, not promoted from one it saw (a restart gives a new replication id) — what a restore from a
   * backup is, and a failover is not (data-look.ts). True at a first check too.
   */
  restarted(): boolean {
    return this.restartedSeen;
  }

  /** The writes the old primary `replid2` had past the fork that this process saw, if any. */
  private async forkLoss(primary: Primary): Promise<WritesLost | null> {
    const looks = this.seen.get(primary.replid2);
    if (!looks || primary.secondOffset < 0) return null;
    this.seen.delete(primary.replid2); // a fork is told once
    const held = primary.secondOffset - 1; // the last byte of the old history the new primary holds
    const last = looks[looks.length - 1];
    const final = (await readOldPrimary(this.redis, last.address, primary.replid2)) ?? last;
    if (final.offset <= held) return null;
    const kept = looks.filter((look) => look.offset <= held).pop();
    const changes = kept && final.changes >= kept.changes ? final.changes - kept.changes : null;
    if (changes === 0) return null; // past the fork only Sentinel's hellos and pings: no data
    const fork = `${primary.replid2}:${primary.secondOffset}`;
    // One process (its SET NX won) publishes the reset: the registrars write their rows again, those whose
    // write was lost among them; the others' are written as they are (docs/spec.md §4.1).
    await this.redis
      .set(this.keys.writesLost(fork), String(Date.now()), 'EX', 3600, 'NX')
      .then((first) => (first === null ? undefined : publishReset(this.redis, this.keys)))
      .catch(() => undefined); // Redis away again: the loss is still told, the rows written at the next boot
    return writesLost({
      prefix: this.keys.prefix,
      fork,
      bytes: final.offset - held,
      changes,
      since: kept?.at ?? looks[0].at,
      until: final.at,
      primary: last.address,
    });
  }
}

/**
 * The old primary at `address`, if it still answers within a second as the primary of history `replid`
 * (Sentinel demotes it only when it next looks, ~10 s after the switch): its final offset and changes.
 */
async function readOldPrimary(redis: RedisClient, address: string, replid: string): Promise<Look | null> {
  const [host, port] = splitAddress(address);
  // A node's options (a Cluster's carry its nodes' credentials and TLS), pointed at the old address.
  const [{ options }] = await primaries(redis);
  const old = withErrorListener(
    new Redis({
      ...options,
      host,
      port,
      sentinels: undefined,
      failoverDetector: false,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      connectTimeout: OLD_PRIMARY_WAIT_MS,
      commandTimeout: OLD_PRIMARY_WAIT_MS,
      lazyConnect: false,
    }),
  );
  try {
    const primary = await readPrimary(old).catch(() => null);
    if (!primary || primary.role !== 'master' || primary.replid !== replid) return null;
    return { offset: primary.offset, changes: primary.changes, at: Date.now(), address };
  } finally {
    await closeRedis(old);
  }
}

async function readPrimary(node: Redis): Promise<Primary> {
  const text = (await node.call('INFO', 'replication', 'persistence')) as string;
  const field = (name: string): string => new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1].trim() ?? '';
  return {
    role: field('role'),
    replid: field('master_replid'),
    replid2: field('master_replid2'),
    offset: Number(field('master_repl_offset')),
    secondOffset: Number(field('second_repl_offset') || -1),
    changes: Number(field('rdb_changes_since_last_save')),
  };
}

/** The address the node's connection reached (its socket's peer), else the one it was given. */
function addressOf(node: Redis): string {
  const peer = node.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  if (peer?.remoteAddress && peer.remotePort) return `${peer.remoteAddress}:${peer.remotePort}`;
  return `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`;
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(':');
  return [address.slice(0, colon).replace(/^::ffff:/, ''), Number(address.slice(colon + 1))];
}
