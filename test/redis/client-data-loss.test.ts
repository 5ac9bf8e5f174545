import type { TimerEvent } from '@sundial/core';
import { watchPartitionCount } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { useStore } from './store-fixture';

const LOST = "Redis lost Sundial's data";
/** A client's look comes every 5 s: room for one on a busy host. */
const LOOK_MS = 12_000;

/**
 * docs/spec.md §4.1: a process with only a client (an app that schedules, no worker module) tells a
 * Redis Cluster shard's loss too — one partition's marker gone, `P:epoch` and `P:partitions` kept — as
 * the watches would: one error line, the marker written anew, and the reset that registers the rows again.
 */
describe("a client-only process and a shard's loss", () => {
  const store = useStore();

  it('says it once, naming the partition, and publishes the reset', async () => {
    const prefix = 'cl-shard';
    const timers = store.open({ prefix, partitions: 3 });
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' }); // connected: the markers recorded
    const listener = new Redis(store.url());
    const resets: TimerEvent[] = [];
    try {
      await listener.subscribe(`${prefix}:events`);
      listener.on('message', (_channel: string, message: string) => resets.push(JSON.parse(message)));
      // What a flush of the shard holding partition 1 leaves: its keys gone, the others' and P:* kept.
      await store.raw.del(...(await store.raw.keys(`${prefix}:{p1}:*`)));
      const lines = () => store.logs.filter((line) => line.message.includes(LOST));
      await waitFor(() => lines().length > 0 || undefined, {
        timeoutMs: LOOK_MS, // deadline: the client's next 5 s look
        what: "the client to say the shard's loss",
      });
      expect(lines()).toEqual([
        {
          level: 'error',
          message: expect.stringContaining(`Sundial: ${LOST} under prefix '${prefix}' in partition 1 of 3`),
          fields: expect.objectContaining({ prefix, partitions: [1], fix: expect.stringContaining('AOF') }),
        },
      ]);
      await waitFor(() => resets.length > 0 || undefined, { what: 'the reset' });
      expect(resets).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
      expect(await store.raw.get(`${prefix}:{p1}:epoch`)).not.toBeNull();
    } finally {
      listener.disconnect();
    }
  }, 20_000);

  it('says nothing where a watch runs on the prefix in the process: the watch says it and counts it', async () => {
    const prefix = 'cl-watched';
    const timers = store.open({ prefix, partitions: 2 });
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    const counted: string[] = [];
    const stop = await watchPartitionCount({
      connection: store.url(),
      prefix,
      partitions: 2,
      intervalMs: 600_000, // no interval look within the test: it looks at its connects only
      onDataLost: (loss) => counted.push(loss.message),
    });
    try {
      // Redis lost everything; the client's read finds no P:partitions first (its miss path's look).
      await store.raw.del(...(await store.raw.keys(`${prefix}:*`)));
      expect(await timers.get('a')).toBeNull();
      expect(store.logs.filter((line) => line.message.includes(LOST))).toEqual([]);
      // The watch's look (at its reconnect) says it and counts it: the client did not take it from it.
      const list = (await store.raw.client('LIST')) as string;
      const watch = /id=(\d+) .*name=sundial-watch/.exec(list)?.[1];
      await store.raw.client('KILL', 'ID', String(watch));
      await waitFor(() => counted.length > 0 || undefined, { what: 'the watch to tell and count the loss' });
      expect(counted).toEqual([expect.stringContaining(`${LOST} under prefix '${prefix}' (first written`)]);
    } finally {
      await stop();
    }
  });
});
