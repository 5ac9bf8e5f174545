import { type DataLoss, SundialKeys, watchPartitionCount } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { DataMarker } from '../../libs/redis/src/infra/data-marker';
import { dataLook } from '../../libs/redis/src/infra/data-look';
import { ReplicationHistory } from '../../libs/redis/src/infra/replication-history';

/**
 * docs/spec.md §4.1 "went back in time": Redis restored from an older backup keeps the data markers as
 * they were; the counters that only grow (a timer's id `P:{pN}:seq`, the fire queue's job id) tell it. The backup is a real one: `SAVE` writes the server's
 * dump.rdb (it runs with `--save ''`, so a shutdown writes none), and a restart loads it.
 */
describe('Redis restored from an older backup', () => {
  let server: RedisServer;
  let raw: Redis;

  beforeEach(async () => {
    server = await startRedis();
    raw = new Redis(server.url, { maxRetriesPerRequest: null });
  });
  afterEach(async () => {
    raw.disconnect();
    await server.stop();
  });

  /** A process: its marker, and the losses its looks told (once each, as a process does). */
  const processOn = (prefix: string) => {
    const keys = new SundialKeys(prefix, 2);
    const marker = new DataMarker(raw, keys);
    const told: DataLoss[] = [];
    const look = dataLook({
      marker,
      history: new ReplicationHistory(raw, keys),
      onDataLost: (loss) => told.push(loss),
      stopped: () => false,
      told: new Set(),
    });
    return { marker, told, look };
  };

  it('a restore that undid schedules and fires is told once per process, with one reset, and rows registered again', async () => {
    const [a, b] = [processOn('rw'), processOn('rw')];
    await a.look();
    await b.look();
    await raw.save(); // the backup
    await raw.incr('rw:{p1}:seq'); // a timer scheduled since
    await raw.incr('rw:sundial-fire-{p0}:id'); // a fire since
    await a.look();
    await b.look();
    await raw.set('rw:{p0}:h:cancelled-since', 'a write the restore undoes');
    await server.restart(0);
    const resets: string[] = [];
    const listener = new Redis(server.url);
    await listener.subscribe('rw:events');
    listener.on('message', (_channel: string, message: string) => resets.push(message));
    try {
      expect(await raw.get('rw:{p0}:h:cancelled-since')).toBeNull(); // the data went back
      for (const process of [a, b, a, b]) await process.look();
      for (const { told } of [a, b]) {
        expect(told).toHaveLength(1);
        expect(told[0]).toMatchObject({
          prefix: 'rw',
          all: true,
          partitions: [0, 1],
          message: expect.stringContaining("Redis went back in time under prefix 'rw'"),
          fix: expect.stringContaining('Restoring Redis from a backup'),
        });
      }
      expect(a.told[0].marker).toBe(b.told[0].marker); // one restore, however many processes
      expect([a.told[0].reset, b.told[0].reset]).toEqual([true, false]);
      await waitFor(() => resets.length > 0 || undefined, { what: 'the reset', timeoutMs: 5_000 }); // deadline
      expect(resets.map((message) => (JSON.parse(message) as { type: string }).type)).toEqual(['reset']);
    } finally {
      listener.disconnect();
    }
  });

  it('a restart that kept the data, a restore that undid no schedule or fire, a process started since: no loss', async () => {
    const seen = processOn('kept');
    await raw.incr('kept:{p0}:seq');
    await seen.look();
    await raw.save();
    await raw.set('kept:{p0}:h:paused-since', 'a pause: no counter moves');
    await seen.look();
    await server.restart(0); // restored from a backup: no schedule or fire undone
    await seen.look();
    const later = processOn('kept'); // never saw the count before the restore: a first start
    await later.look();
    await seen.look();
    await raw.incr('kept:{p0}:seq');
    await raw.save();
    await server.restart(0); // a restart that kept everything
    await seen.look();
    expect([seen.told, later.told]).toEqual([[], []]);
  });

  /** Two looks of the watch (each reads 7 keys) after now: its reads counted by Redis, hits and misses. */
  const looked = async (): Promise<void> => {
    const reads = async () => {
      const stats = await raw.info('stats');
      return ['keyspace_hits', 'keyspace_misses']
        .map((field) => Number(new RegExp(`${field}:(\\d+)`).exec(stats)?.[1]))
        .reduce((sum, n) => sum + n, 0);
    };
    const from = await reads();
    await waitFor(async () => (await reads()) >= from + 16 || undefined, {
      what: 'two looks',
      timeoutMs: 5_000, // deadline
    }); // deadline
  };

  it("a watch (the apps') tells it after its reconnect, once", async () => {
    const losses: DataLoss[] = [];
    const stop = await watchPartitionCount({
      connection: server.url,
      prefix: 'watched',
      partitions: 1,
      onDataLost: (loss) => losses.push(loss),
      onWritesLost: () => undefined, // as the apps: the replication read tells a restart from a failover
      told: new Set(),
      intervalMs: 100,
    });
    try {
      await looked();
      await raw.incr('watched:{p0}:seq');
      await raw.save(); // the backup
      await raw.incr('watched:{p0}:seq'); // a timer scheduled since
      await looked();
      await server.restart(0);
      await waitFor(() => losses.length > 0 || undefined, { what: 'the restore told', timeoutMs: 10_000 }); // deadline
      expect(losses[0].message).toContain("Redis went back in time under prefix 'watched'");
      await looked();
      await looked();
      expect(losses).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});
