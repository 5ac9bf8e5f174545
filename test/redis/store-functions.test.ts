import type { TimerEvent, TimerSpec } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import type Redis from 'ioredis';
import { waitFor } from '@sundial/testing/harness';
import { keysUnder, refusal, useStore } from './store-fixture';

const store = useStore();

/** `INFO commandstats` calls of `evalsha` and `fcall` so far. */
async function scriptCalls(raw: Redis): Promise<{ evalsha: number; fcall: number }> {
  const info = await raw.info('commandstats');
  const calls = (command: string) =>
    Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return { evalsha: calls('evalsha'), fcall: calls('fcall') };
}

/** The names of the function libraries Redis holds. */
async function libraries(raw: Redis): Promise<string[]> {
  const listed = (await raw.call('FUNCTION', 'LIST')) as unknown[][];
  return listed.map((entry) => String(entry[1]));
}

/**
 * The client's writes run as Redis Functions (store/script-loader.ts FUNCTION_SCRIPTS; docs/design.md
 * "Redis script contract", "Loading"): loaded when the client connects, loaded again by a call that finds
 * them gone, refused at connect when the ACL user may not load them.
 */
describe('the client writes as Redis Functions', () => {
  it('loads its libraries when it connects, and its writes are FCALLs, not EVALSHAs', async () => {
    await store.raw.call('FUNCTION', 'FLUSH');
    const timers = store.open();
    await timers.connect();
    // one library per hot script, the client's writes among them, before its first write
    const scripts = (await libraries(store.raw)).map((name) => name.replace(/_[0-9a-f]{16}$/, '')).sort();
    expect(scripts).toEqual(
      ['schedule', 'cancel', 'cancel_all', 'reschedule', 'pause', 'resume', 'trigger', 'backfill']
        .concat(['take_due', 'claim', 'complete'])
        .map((script) => `sundial_${script}`)
        .sort(),
    );
    const before = await scriptCalls(store.raw);
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    await timers.reschedule('a', { delay: '2h' });
    await timers.pause('a');
    await timers.resume('a');
    expect(await timers.cancel('a')).toBe(true);
    expect(await timers.cancelAll()).toBe(0);
    const after = await scriptCalls(store.raw);
    expect(after.evalsha - before.evalsha).toBe(0);
    // five writes of one call each, and the cancelAll's round of four calls in flight (one partition)
    expect(after.fcall - before.fcall).toBe(9);
  });

  it('a Redis that lost its functions (FUNCTION FLUSH) gets them back at the next writes, sent at once', async () => {
    const timers = store.open();
    await timers.connect();
    await store.raw.call('FUNCTION', 'FLUSH');
    // 250 specs: three schedule calls in flight together, each finding its function gone
    const specs = Array.from({ length: 250 }, (_, i): TimerSpec => ({
      key: `k${i}`,
      handler: 'h',
      delay: '1h',
    }));
    const created = await timers.scheduleMany(specs);
    expect(created.map((timer) => timer.key)).toEqual(specs.map((spec) => spec.key));
    expect(await timers.snapshot()).toHaveLength(250);
    expect((await libraries(store.raw)).some((name) => name.startsWith('sundial_schedule_'))).toBe(true);
    await store.raw.call('FUNCTION', 'FLUSH');
    expect(await timers.cancel('k0')).toBe(true);
    await store.raw.call('FUNCTION', 'FLUSH');
    expect(await timers.reschedule('k1', { delay: '2h' })).toMatchObject({ key: 'k1', version: 2 });
    await store.raw.call('FUNCTION', 'FLUSH');
    expect(await timers.cancelAll()).toBe(249);
    expect(await timers.get('k2')).toBeNull();
  });

  it('a write whose event reached no subscriber does not keep the next write’s event unpublished', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'quiet', handler: 'h', delay: '1h' }); // no one listens yet
    const subscriber = store.raw.duplicate();
    const events: TimerEvent[] = [];
    try {
      subscriber.on('message', (_channel: string, message: string) =>
        events.push(JSON.parse(message) as TimerEvent),
      );
      await subscriber.subscribe(`${timers.keys.prefix}:events`);
      await timers.reschedule('quiet', { delay: '2h' });
      await waitFor(() => events.some((event) => event.type === 'scheduled' && event.key === 'quiet'));
    } finally {
      await subscriber.quit();
    }
  });

  it('refuses at connect an ACL user that may not load functions, naming the rights, having written nothing', async () => {
    await store.raw.call('ACL', 'SETUSER', 'noload', 'on', '>secret', '~*', '&*', '+@all', '-function|load');
    const url = new URL(store.url());
    url.username = 'noload';
    url.password = 'secret';
    const timers = new RedisTimers({ connection: url.toString(), prefix: 'noload' });
    try {
      const refused = await refusal(timers.schedule({ key: 'a', handler: 'h', delay: '1h' }));
      expect(refused).toMatchObject({ reason: 'invalid', field: 'connection' });
      expect(refused.message).toMatch(/refused to load Sundial's Redis Functions: NOPERM/);
      expect(refused.fix).toMatch(/\+fcall \+function\|load/);
      expect(await keysUnder(store.raw, 'noload')).toEqual([]);
    } finally {
      await timers.dispose();
      await store.raw.call('ACL', 'DELUSER', 'noload');
    }
  });
});
