import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { type RedisServer, startRedis } from './redis-server';
import { waitFor } from './wait-for';

const run = promisify(execFile);

/** A private Redis Cluster of `primaries` nodes without replicas, each a private redis-server. */
export interface RedisCluster {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,…`: what REDIS_URL takes */
  url: string;
  nodes: RedisServer[];
  /** Which node serves `slot`. */
  nodeOfSlot(slot: number): Promise<RedisServer>;
  stop(): Promise<void>;
}

/** A `redis-server --cluster-enabled yes` on a free port, in no cluster yet (CLUSTER MEET joins it). */
export function startClusterNode(args: string[] = []): Promise<RedisServer> {
  // A node learns its own address from its peers; a lone primary has none, so it is told.
  const cluster = [
    '--cluster-enabled',
    'yes',
    '--cluster-node-timeout',
    '2000',
    '--cluster-announce-ip',
    '127.0.0.1',
  ];
  return startRedis({ args: [...cluster, ...args] });
}

/**
 * Starts `primaries` (default 3) `redis-server --cluster-enabled yes` on free ports with their own temp
 * dirs, joins them with `redis-cli --cluster create … --cluster-replicas 0` (the 16384 slots split into
 * equal contiguous ranges, in port order; redis-cli refuses fewer than 3 primaries, so 1 or 2 are joined
 * by hand the same way) and resolves once every node reports `cluster_state:ok`. `args` go to every node
 * (e.g. `--appendonly yes --appendfsync always`, so its data survives a restart).
 */
export async function startRedisCluster(primaries = 3, args: string[] = []): Promise<RedisCluster> {
  const nodes = await Promise.all(Array.from({ length: primaries }, () => startClusterNode(args)));
  const stop = () => Promise.all(nodes.map((node) => node.stop())).then(() => undefined);
  try {
    const clients = nodes.map((node) => new Redis(node.url));
    try {
      if (primaries >= 3) {
        await run('redis-cli', [
          '--cluster',
          'create',
          ...nodes.map((node) => `127.0.0.1:${node.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ]);
      } else {
        await joinByHand(clients, nodes);
      }
      await waitFor(
        async () => {
          const states = await Promise.all(clients.map((client) => client.cluster('INFO')));
          return states.every((info) => info.includes('cluster_state:ok'));
        },
        { timeoutMs: 20_000, intervalMs: 100, what: 'every cluster node to report cluster_state:ok' },
      );
    } finally {
      for (const client of clients) client.disconnect();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `redis+cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`,
    nodes,
    nodeOfSlot: (slot) => nodeOfSlot(nodes, slot),
    stop,
  };
}

/**
 * A new cluster node (`args` as startClusterNode's) made a replica of `primary` (a node of a running
 * cluster): it meets the primary, replicates it, and resolves once its link is up and its offset is the
 * primary's (a full sync done). A `CLUSTER FAILOVER` sent to it then promotes it.
 */
export async function startClusterReplica(primary: RedisServer, args: string[] = []): Promise<RedisServer> {
  const replica = await startClusterNode(args);
  const [source, joining] = [new Redis(primary.port), new Redis(replica.port)];
  try {
    const id = (await source.cluster('MYID')) as string;
    await joining.cluster('MEET', '127.0.0.1', primary.port);
    await waitFor(async () => ((await joining.cluster('NODES')) as string).includes(id), {
      timeoutMs: 10_000, // deadline: the handshake takes a gossip round
      what: 'the new node to know the primary',
    });
    await joining.cluster('REPLICATE', id);
    await replicaInStep(source, joining);
  } catch (error) {
    await replica.stop();
    throw error;
  } finally {
    source.disconnect();
    joining.disconnect();
  }
  return replica;
}

/** Resolves once `replica`'s link to `primary` is up and its replication offset is the primary's. */
export async function replicaInStep(primary: Redis, replica: Redis): Promise<void> {
  const offset = (info: string) => /master_repl_offset:(\d+)/.exec(info)?.[1];
  await waitFor(
    async () => {
      const [ours, theirs] = await Promise.all([primary.info('replication'), replica.info('replication')]);
      return (/master_link_status:up/.test(theirs) && offset(ours) === offset(theirs)) || undefined;
    },
    { timeoutMs: 10_000, what: 'the replica to be in step' }, // deadline: a full sync
  );
}

/** What `redis-cli --cluster create` does for 3 or more: equal contiguous slot ranges, then MEET. */
async function joinByHand(clients: Redis[], nodes: RedisServer[]): Promise<void> {
  const slots = 16_384;
  await Promise.all(
    clients.map((client, i) =>
      client.call(
        'CLUSTER',
        'ADDSLOTSRANGE',
        Math.floor((i * slots) / clients.length),
        Math.floor(((i + 1) * slots) / clients.length) - 1,
      ),
    ),
  );
  for (const node of nodes.slice(1)) await clients[0].cluster('MEET', '127.0.0.1', node.port);
}

async function nodeOfSlot(nodes: RedisServer[], slot: number): Promise<RedisServer> {
  const client = new Redis(nodes[0].url);
  try {
    const ranges = await client.cluster('SLOTS');
    const [, , primary] = ranges.find(([first, last]) => slot >= first && slot <= last) ?? [];
    const owner = nodes.find((node) => node.port === primary?.[1]);
    if (!owner) throw new Error(`no node of this cluster serves slot ${slot}`);
    return owner;
  } finally {
    client.disconnect();
  }
}
