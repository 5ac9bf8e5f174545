import { rmSync, writeFileSync } from 'node:fs';
import fsPromises from 'node:fs/promises';
import type { TimersApi } from '@sundial/core';
import { counted, file, followersOnRedis, within } from './schedules-fixture';

/** The rows as [key, everyMs]. */
const rowsOf = async (timers: TimersApi) => (await timers.list()).items.map((row) => [row.key, row.everyMs]);

/**
 * The schedules follower's edge cases (docs/spec.md §5.1 "Rows followed from a file"): each case a file,
 * prefix and follower of its own beside one Redis.
 */
describe('SchedulesFollower edge cases', () => {
  const { setUp } = followersOnRedis();

  /**
   * A global cancelAll while an edit is being applied (the listing made, a write on its way): the apply
   * under way marked its text applied after the reset, so the pass the reset asked for found nothing to
   * do — the rows the reset cancelled, but the apply did not write, stayed gone until the next edit.
   */
  it('a reset during an apply: every row of the file is scheduled again', async () => {
    const { path, timers, start, applied } = await setUp('reset-apply', file(['k0', 'k1']));
    let armed = false;
    const { api } = counted(timers, async (name) => {
      if (!armed || name !== 'schedule') return;
      armed = false;
      const reset = new Promise<void>((resolve) => {
        const off = timers.on('reset', () => {
          off();
          resolve();
        });
      });
      await timers.cancelAll();
      await reset; // the follower heard it too: its listener came first
    });
    await start(api);
    armed = true;
    const done = applied(2, 'the edit applied');
    writeFileSync(
      path,
      file(['k0', 'k1'], (key) => (key === 'k0' ? '1h' : '3h')),
    );
    await done;
    expect(armed).toBe(false);
    await within(async () => (await rowsOf(timers)).length === 2, 'both rows back after the reset');
    expect(await rowsOf(timers)).toEqual([
      ['k0', 3_600_000],
      ['k1', 3 * 3_600_000],
    ]);
  });

  /**
   * An edit that changes nothing a row means — a comment, fields reordered, or a field spelled out at
   * what the follower writes anyway (`removeOnComplete: false`) or at its default (`overlap: skip`,
   * `meta: {}`) — replaced the row before: a new id, its runs' state gone, and a finished one-shot
   * (kept so that it is not run again) scheduled again.
   */
  it('a no-op edit leaves every row, its id and its version untouched', async () => {
    const text = [
      'timers:',
      '  - { key: c, handler: log, cron: "0 6 * * *", tz: UTC }',
      '  - { key: i, handler: log, every: 1h, payload: { n: 1 } }',
      '  - { key: o, handler: log, at: "2030-01-01T00:00:00Z" }',
      '',
    ].join('\n');
    const { path, timers, start, applied, lines } = await setUp('noop', text);
    await start();
    const before = (await timers.list()).items.map((row) => [row.key, row.id, row.version]);
    expect(before).toHaveLength(3);
    const written = lines.length;
    const done = applied(3, 'the no-op edit applied');
    writeFileSync(
      path,
      [
        '# reviewed 2026-12-06',
        'timers:',
        '  - { tz: UTC, cron: "0 6 * * *", handler: log, key: c, overlap: skip, removeOnComplete: false, meta: {} }',
        '  - { key: i, handler: log, every: 60m, payload: { n: 1 }, removeOnComplete: false, delivery: at-least-once }',
        '  - { key: o, handler: log, at: "2030-01-01T00:00:00.000Z", removeOnComplete: false, payload: null }',
        '',
      ].join('\n'),
    );
    await done;
    expect(lines.slice(written).filter((line) => line.message.startsWith('schedules file: row'))).toEqual([]);
    expect((await timers.list()).items.map((row) => [row.key, row.id, row.version])).toEqual(before);
  });
});

describe('SchedulesFollower: a reset while the file is not applied', () => {
  const { setUp } = followersOnRedis();

  /**
   * The file refused as a whole (not YAML) or unreadable (deleted, a volume remounted) keeps its rows "as
   * they are until the file is back"; a reset meanwhile cancelled them all, and the follower, with no text
   * to apply, scheduled none again — every row of the file gone until someone fixed the file.
   */
  it.each([
    ['not YAML', (path: string) => writeFileSync(path, 'timers:\n  - { key: k0, handler: log\n')],
    ['deleted', (path: string) => rmSync(path)],
  ])(
    '%s: the rows last applied are scheduled again, nothing else is written or removed',
    async (_case, breakIt) => {
      const { path, timers, start, lines } = await setUp(
        `broken-${_case.replace(' ', '-')}`,
        file(['k0', 'k1']),
      );
      await start();
      const warned = () => lines.filter((line) => line.level === 'warn');
      breakIt(path);
      await within(() => warned().length === 1, 'the file reported');
      // an API timer beside the rows: the pass after the reset leaves it (and the reset its own)
      expect(await timers.cancelAll()).toBe(2);
      await timers.schedule({ key: 'api', handler: 'log', every: '1h' });
      await within(
        async () => (await rowsOf(timers)).length === 3,
        'the rows last applied back after the reset',
      );
      expect(await rowsOf(timers)).toEqual([
        ['api', 3_600_000],
        ['k0', 3_600_000],
        ['k1', 2 * 3_600_000],
      ]);
      expect((await timers.get('k0'))?.meta).toMatchObject({ sundialOwner: 'schedules-file' });
      expect(warned()).toHaveLength(1); // the file's problem, said once
    },
  );
});

/** Cases the audit found right; kept so that they stay so. */
describe('SchedulesFollower: problems said once, rows kept', () => {
  const { setUp } = followersOnRedis();
  const BAD = '  - { key: bad, handler: log, every: soon }\n';
  /** Counts the follower's reads of `path` from now on (the real reads, passed through). */
  const readsOf = (path: string) => {
    const read = fsPromises.readFile;
    let count = 0;
    jest.spyOn(fsPromises, 'readFile').mockImplementation(async (...args: Parameters<typeof read>) => {
      if (args[0] === path) count++;
      return read(...args);
    });
    return () => count;
  };
  afterEach(() => jest.restoreAllMocks());

  it('a YAML error is said once over many reads, the rows kept; fixed, nothing is written', async () => {
    const text = file(['k0', 'k1']);
    const { path, start, ids, lines, backAsItWas } = await setUp('yaml-error', text);
    await start();
    const before = await ids();
    const from = lines.length;
    const reads = readsOf(path);
    writeFileSync(path, `${text}  - { key: k2, handler: log\n`);
    // the refusal, then more reads of the same text (one every 250 ms)
    await within(() => lines.length > from && reads() >= 6, 'reads of the broken file after its refusal');
    expect(lines.slice(from)).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(
          /^The schedules file is not applied: it is not YAML: [^]*line 5, column 1/,
        ),
        fields: expect.objectContaining({ reason: 'invalid', fix: 'Fix the YAML syntax.' }),
      }),
    ]);
    expect(await ids()).toEqual(before);
    await backAsItWas(text, 2, from, before);
  });

  it('a row invalid, fixed, invalid again is said each time it becomes invalid, not at each read', async () => {
    const { path, start, lines, statuses } = await setUp('flip', `${file(['k0'])}${BAD}`);
    await start();
    const said = () => lines.filter((line) => line.level === 'warn' && line.fields?.key === 'bad');
    expect(said()).toHaveLength(1);
    const edit = async (text: string, rows: number) => {
      const from = statuses.length;
      writeFileSync(path, text);
      await within(() => statuses.slice(from).some((status) => status.rows === rows), 'the edit applied');
    };
    await edit(`${file(['k0'])}  - { key: bad, handler: log, every: 1h }\n`, 2);
    expect(said()).toHaveLength(1);
    await edit(`${file(['k0'])}${BAD}`, 1);
    const reads = readsOf(path);
    await within(() => reads() >= 3, 'three more reads');
    expect(said()).toHaveLength(2);
  });

  it('a follower restarted after a row left the file while it was down removes that row, and only it', async () => {
    const { path, timers, start, ids } = await setUp('restart', file(['k0', 'k1', 'k2']));
    const first = await start();
    await timers.schedule({ key: 'k3', handler: 'log', every: '1h' }); // through the API
    await first.stop();
    const before = await ids();
    writeFileSync(path, file(['k0', 'k2']));
    await start();
    const after = await ids();
    expect([...after.keys()]).toEqual(['k0', 'k2', 'k3']);
    expect(['k0', 'k2', 'k3'].map((key) => after.get(key))).toEqual(
      ['k0', 'k2', 'k3'].map((key) => before.get(key)),
    );
  });

  /**
   * A row whose key an API timer holds is refused (`duplicate-key`), and the fix says to cancel the key if
   * it is a leftover; done, the row stayed unscheduled until the file's next edit (or a reset), the
   * problem gauge at 1 meanwhile.
   */
  it('a row refused for a key held by an API timer is applied once the key is free, said once', async () => {
    const text = `${file(['k0'])}  - { key: taken, handler: log, every: 3h }\n`;
    const { timers, start, lines, statuses } = await setUp('taken', text);
    const api = await timers.schedule({ key: 'taken', handler: 'log', every: '1h' });
    await start(timers, 200); // retried every 200 ms here (5 s by default)
    const said = () => lines.filter((line) => line.level === 'warn' && line.fields?.key === 'taken');
    expect(said()).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ reason: 'duplicate-key' }) }),
    ]);
    // a retry meanwhile leaves the API timer as it is, and says nothing again
    const from = statuses.length;
    await within(() => statuses.length >= from + 2, 'two retries');
    expect(await timers.get('taken')).toEqual(api);
    expect(await timers.cancel('taken')).toBe(true);
    const row = await within(async () => {
      const taken = await timers.get('taken');
      return taken?.meta?.sundialOwner === 'schedules-file' && taken;
    }, "the file's row under the key freed");
    expect(row.everyMs).toBe(3 * 3_600_000);
    expect(said()).toHaveLength(1);
    // The pass tells its status once it ended, after the write just seen: a CI run read the one before.
    await within(() => statuses.at(-1)?.problems === 0, 'the status of the pass that wrote the row');
    expect(statuses.at(-1)).toMatchObject({ problems: 0, rows: 2 });
  });
});
