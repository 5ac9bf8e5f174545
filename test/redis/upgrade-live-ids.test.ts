import { silentLogger } from '@sundial/core';
import { migrateLiveIds, runScript } from '@sundial/redis';
import type Redis from 'ioredis';
import { eventually, type FireCluster, useFirePath } from './fire-fixture';

const fire = useFirePath();

const HOUR = 3_600_000;

/**
 * A partition as the version before the live-id bitmaps (3efd252) left it: rows that store `v`, `s`
 * and `k`, the `due`/`keys` indexes, and the `ids` hash (id → key) with live entries and stale ones —
 * as its schedule.lua wrote them.
 */
async function writeOldPartition(raw: Redis, cluster: FireCluster, now: number): Promise<string> {
  const base = cluster.timers.keys.base(0);
  const row = (key: string, fields: Record<string, string | number>) =>
    raw.hset(`${base}t:${key}`, { v: '1', s: 'pending', k: 'once', h: 'h', sa: now - 5_000, ...fields });
  await row('due', { id: '1p0', d: now - 1_000 });
  await row('later', { id: '2p0', d: now + HOUR });
  await row('moved', { id: '3p0', d: now + HOUR });
  await row('every', { id: '4p0', v: '3', k: 'interval', em: HOUR, d: now - 500, rc: '2' });
  // scheduled again after a cancel: its creation's entry went into the earlier life's ledger
  await row('again', { id: '6p0', d: now - 1_000 });
  await raw.rpush(
    `${base}h:again`,
    JSON.stringify({ a: now - 5_000, e: 'scheduled', v: 1 }),
    JSON.stringify({ a: now - 9_000, e: 'cancelled', v: 1, r: 'manual' }),
    JSON.stringify({ a: now - 10_000, e: 'scheduled', v: 1 }),
  );
  await row('done', { id: '7p0', s: 'completed', d: now - HOUR, rm: '0', rc: '1' });
  await raw.zadd(`${base}due`, now - 1_000, 'due', now + HOUR, 'later', now + HOUR, 'moved');
  await raw.zadd(`${base}due`, now - 500, 'every', now - 1_000, 'again');
  await raw.zadd(`${base}keys`, 0, 'due', 0, 'later', 0, 'moved', 0, 'every', 0, 'again');
  await raw.set(`${base}seq`, '7');
  await raw.hset(`${base}ids`, {
    '1p0': 'due',
    '2p0': 'later',
    '3p0': 'moved',
    '4p0': 'every',
    '5p0': 'again', // stale: the key's row holds a later id
    '6p0': 'again',
    '7p0': 'done', // stale: that row is finished
    '8p0': 'gone', // stale: no row at all
  });
  return base;
}

/** The events of a key's ledger, newest first. */
async function eventsOf(cluster: FireCluster, key: string): Promise<string[]> {
  return (await cluster.timers.history(key)).map((entry) => entry.event);
}

const LIVE = ['1p0', '2p0', '3p0', '4p0', '6p0'];

describe('upgrade from the ids hash to live-id bitmaps', () => {
  it('converts the live ids at start, and old rows fire, cancel, reschedule and list', async () => {
    const cluster = await fire.cluster();
    const base = await writeOldPartition(fire.raw, cluster, await cluster.redisNow());
    const { timers } = cluster;

    // the client's first call starts it: the partition is converted before the answer
    for (const id of LIVE) expect(await timers.check(id)).toBe(true);
    for (const id of ['5p0', '7p0', '8p0']) expect(await timers.check(id)).toBe(false);
    expect((await timers.snapshot()).sort()).toEqual(LIVE);
    expect(await fire.raw.exists(`${base}ids`)).toBe(0);
    expect(await fire.raw.hget(`${base}t:again`, 'lo')).toBe('1');
    expect(await fire.raw.hget(`${base}t:due`, 'lo')).toBeNull(); // no ledger: its entry is implied

    // a second migration finds nothing and changes nothing
    const bitmaps = await fire.raw.getBuffer(`${base}i:0:0`);
    expect(await migrateLiveIds(fire.raw, timers.keys)).toBe(0);
    expect(await fire.raw.getBuffer(`${base}i:0:0`)).toEqual(bitmaps);

    expect((await timers.list()).items.map((timer) => timer.key)).toEqual([
      'again',
      'due',
      'every',
      'later',
      'moved',
    ]);
    expect(await timers.get('every')).toMatchObject({ version: 3, kind: 'interval', status: 'pending' });

    expect(await timers.cancel('later')).toBe(true);
    expect(await timers.check('2p0')).toBe(false);
    const moved = await timers.reschedule('moved', { delay: '2h' });
    expect(moved).toMatchObject({ id: '3p0', version: 2, status: 'pending' });
    expect(await timers.check('3p0')).toBe(true);

    const ran: string[] = [];
    await cluster.dispatcher();
    await cluster.runner({ h: (_payload, ctx) => void ran.push(ctx.key) });
    await eventually(cluster.events, { type: 'completed', key: 'due' });
    await eventually(cluster.events, { type: 'completed', key: 'every' });
    await eventually(cluster.events, { type: 'completed', key: 'again' });
    expect(ran.sort()).toEqual(['again', 'due', 'every']);
    expect(await timers.check('1p0')).toBe(false);
    expect(await timers.check('6p0')).toBe(false);
    expect(await timers.get('every')).toMatchObject({ runCount: 3, status: 'pending' });
    expect(await timers.check('4p0')).toBe(true);
    expect((await timers.snapshot()).sort()).toEqual(['3p0', '4p0']);
    expect((await timers.list()).items.map((timer) => timer.key)).toEqual(['every', 'moved']);
    // the old version wrote its `scheduled` entry once; the hand-off did not add it again
    const ledger = ['completed', 'claimed', 'armed', 'scheduled', 'cancelled', 'scheduled'];
    expect(await eventsOf(cluster, 'again')).toEqual(ledger);
  });

  it('keeps converting what an old-version process still writes, and warns that it runs', async () => {
    const cluster = await fire.cluster();
    const base = await writeOldPartition(fire.raw, cluster, await cluster.redisNow());
    await cluster.dispatcher({ pollMs: 60_000 }); // its start converts the partition
    expect(await fire.raw.exists(`${base}ids`)).toBe(0);
    await cluster.timers.connect(); // started before the old process writes again

    // an old process schedules one more: its row and its `ids` entry
    const due = (await cluster.redisNow()) + HOUR;
    await fire.raw.hset(`${base}t:old-writer`, {
      id: '9p0',
      v: '1',
      s: 'pending',
      k: 'once',
      h: 'h',
      sa: 1,
      d: due,
    });
    await fire.raw.hset(`${base}ids`, '9p0', 'old-writer');
    expect(await cluster.timers.check('9p0')).toBe(false);

    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    await cluster.reconciler({ logger }).reconcileOnce();
    expect(warnings).toEqual([expect.stringContaining('stop every process of that version')]);
    expect(await cluster.timers.check('9p0')).toBe(true);
    expect(await fire.raw.exists(`${base}ids`)).toBe(0);
  });

  it('an old row handed off before the upgrade and re-armed after it writes its scheduled entry once', async () => {
    const cluster = await fire.cluster();
    const base = cluster.timers.keys.base(0);
    const now = await cluster.redisNow();
    // what 3efd252 left of a hand-off whose job was then lost: the row armed, its ledger written
    await fire.raw.hset(`${base}t:lost-job`, {
      ...{ id: '1p0', v: '1', s: 'pending', k: 'once', h: 'h', sa: now - 5_000, d: now - 1_000 },
      j: 't-1p0-v1-r0',
    });
    await fire.raw.zadd(`${base}armed`, now - 3_000, 'lost-job');
    await fire.raw.zadd(`${base}keys`, 0, 'lost-job');
    await fire.raw.set(`${base}seq`, '1');
    await fire.raw.hset(`${base}ids`, '1p0', 'lost-job');
    await fire.raw.lpush(
      `${base}h:lost-job`,
      JSON.stringify({ a: now - 5_000, e: 'scheduled', v: 1 }),
      JSON.stringify({ a: now - 3_000, e: 'armed', v: 1, d: now - 1_000 }),
    );

    await cluster.dispatcher();
    await cluster.runner({ h: () => undefined });
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toMatchObject({ rearmed: 1 });
    await eventually(cluster.events, { type: 'completed', key: 'lost-job' });
    const ledger = ['completed', 'claimed', 'armed', 'armed', 'scheduled'];
    expect(await eventsOf(cluster, 'lost-job')).toEqual(ledger);
  });

  it('converts a large hash page by page, and a run cut off midway is finished by the next', async () => {
    const cluster = await fire.cluster();
    const base = cluster.timers.keys.base(0);
    const ids: Record<string, string> = {};
    const pipeline = fire.raw.pipeline();
    for (let n = 1; n <= 1_500; n++) {
      const id = `${n}p0`;
      ids[id] = `k${n}`;
      // every third entry is stale (its row holds another id)
      pipeline.hset(`${base}t:k${n}`, { id: n % 3 === 0 ? `${n + 100_000}p0` : id, h: 'h', sa: '1', d: '2' });
    }
    await pipeline.exec();
    await fire.raw.hset(`${base}ids`, ids);
    // one page, as a process that stopped after it would leave the partition
    const { ledgerSize } = cluster.timers.keys;
    const page = runScript(fire.raw, 'migrate-ids', base, ledgerSize, cluster.prefix, '0', 500);
    const [cursor, first] = (await page) as [string, number];
    expect(cursor).not.toBe('0');
    expect(first).toBeGreaterThan(0);
    expect(await fire.raw.hlen(`${base}ids`)).toBeLessThan(1_500);

    expect(await migrateLiveIds(fire.raw, cluster.timers.keys)).toBe(1_000 - first);
    expect(await fire.raw.exists(`${base}ids`)).toBe(0);
    const live = (await cluster.timers.snapshot()).sort();
    expect(live).toEqual(
      Object.keys(ids)
        .filter((id) => Number.parseInt(id, 10) % 3 !== 0)
        .sort(),
    );
  });
});
