import { silentLogger, type TimerEvent } from '@sundial/core';
import { Dispatcher, type RedisConnection, RedisTimers, TimerRunner } from '@sundial/redis';
import { type RedisServer, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { recorder, work } from './fire-fixture';

/** Within these, a message came by pub/sub, not by a lease renewal (20 s) or a safety-net pass (60 s). */
const EVENT_WITHIN_MS = 2_000;
const RUN_WITHIN_MS = 10_000;
const ABORT_WITHIN_MS = 2_000;

/** Renewals every 20 s, and no safety-net pass within a test: aborts and runs come by pub/sub. */
const LEASE_MS = 60_000;
const POLL_MS = 60_000;

/** Sundial's three subscribers, started: a client listening to 'scheduled', a dispatcher and a runner. */
export interface PubsubStack {
  timers: RedisTimers;
  /** every 'scheduled' event the client heard */
  events: TimerEvent[];
  /** handler `h`: runs until aborted */
  job: ReturnType<typeof recorder>;
  close(): Promise<void>;
}

/** `fire`: the dispatcher's and runner's connection (default `client`'s). */
export async function startPubsubStack(
  prefix: string,
  partitions: number,
  client: RedisConnection,
  fire: RedisConnection = client,
): Promise<PubsubStack> {
  const shared = { prefix, partitions, logger: silentLogger };
  const events: TimerEvent[] = [];
  const job = recorder((ctx) => work(ctx.signal, LEASE_MS));
  const timers = new RedisTimers({ ...shared, connection: client });
  timers.on('scheduled', (event) => events.push(event));
  const dispatcher = new Dispatcher({ ...shared, connection: fire, pollMs: POLL_MS });
  await dispatcher.start();
  const runner = new TimerRunner({
    ...shared,
    connection: fire,
    handlers: { h: job.handler },
    leaseMs: LEASE_MS,
  });
  await runner.start();
  return {
    timers,
    events,
    job,
    async close() {
      await runner.close(0);
      await dispatcher.close();
      await timers.dispose();
    },
  };
}

/** Subscribers of each channel, over every node (a cluster's PUBSUB NUMSUB is per node). */
export async function subscriberCounts(
  nodes: RedisServer[],
  channels: string[],
): Promise<Record<string, number>> {
  const counts = Object.fromEntries(channels.map((channel) => [channel, 0]));
  for (const node of nodes) {
    const admin = new Redis(node.url);
    try {
      const reply = (await admin.pubsub('NUMSUB', ...channels)) as (string | number)[];
      for (let i = 0; i < reply.length; i += 2) counts[reply[i]] += Number(reply[i + 1]);
    } finally {
      admin.disconnect();
    }
  }
  return counts;
}

/** Sundial's channels: `P:events`, `P:abort` and the wake channel of each partition. */
export function sundialChannels(timers: RedisTimers, partitions: number): string[] {
  return [
    timers.keys.eventsChannel,
    timers.keys.abortChannel,
    ...Array.from({ length: partitions }, (_, partition) => `${timers.keys.base(partition)}wake`),
  ];
}

/**
 * What a timer scheduled now went unheard by: its `scheduled` event by the client's listener
 * (`P:events`), the wake by the dispatcher (no run follows) and, once it runs, its cancel's abort by
 * the runner (`P:abort`).
 */
export async function unheard({ timers, events, job }: PubsubStack, key: string): Promise<string[]> {
  const within = <T>(probe: () => T | undefined | false, timeoutMs: number) =>
    waitFor(probe, { timeoutMs }).catch(() => undefined);
  await timers.schedule({ key, handler: 'h', delay: 0 });
  const [event, run] = await Promise.all([
    within(() => events.some((event) => event.key === key), EVENT_WITHIN_MS),
    within(() => job.calls.find((ctx) => ctx.key === key), RUN_WITHIN_MS),
  ]);
  const missed = event ? [] : ['P:events (the listener)'];
  if (!run) return [...missed, 'wake (the dispatcher: no run)'];
  await timers.cancel(key);
  const aborted = await within(() => run.signal.aborted, ABORT_WITHIN_MS);
  return aborted ? missed : [...missed, 'P:abort (the runner)'];
}
