import { readSchedules, SCHEDULES_OWNER_MARKER } from './schedules-file';

const LIMITS = { minEveryMs: 100 };

describe('readSchedules', () => {
  it('gives each valid row as a spec kept when finished, marked with the owner and its hash', () => {
    const read = readSchedules(
      'timers:\n  - { key: a, handler: h, every: 1m, meta: { team: ops } }\n  - { key: b, handler: h, cron: "0 6 * * *", tz: UTC }\n',
      LIMITS,
    );
    expect(read.problems).toEqual([]);
    expect(read.rows?.map(({ row, spec }) => [row, spec.key, spec.removeOnComplete])).toEqual([
      [1, 'a', false],
      [2, 'b', false],
    ]);
    expect(read.rows?.[0].spec.meta).toMatchObject({ team: 'ops', sundialOwner: SCHEDULES_OWNER_MARKER });
  });

  it('hashes what a row means: the same for reordered fields and equal durations, another when it changes', () => {
    const hash = (row: string) =>
      readSchedules(`timers:\n  - ${row}\n`, LIMITS).rows?.[0].spec.meta?.sundialRow;
    const base = hash('{ key: a, handler: h, every: 60s }');
    expect(hash('{ every: 1m, handler: h, key: a }')).toBe(base);
    expect(hash('{ key: a, handler: h, every: 2m }')).not.toBe(base);
    expect(hash('{ key: a, handler: h, every: 60s, payload: { n: 1 } }')).not.toBe(base);
    const bounded = hash('{ key: a, handler: h, every: 60s, timeout: 15m }');
    expect(bounded).toEqual(expect.any(String));
    expect(bounded).not.toBe(base);
    expect(hash('{ key: a, handler: h, every: 60s, timeout: 900000 }')).toBe(bounded);
  });

  it('hashes a field spelled out at what the follower writes or at its default as the row without it', () => {
    const hash = (row: string) =>
      readSchedules(`timers:\n  - ${row}\n`, LIMITS).rows?.[0].spec.meta?.sundialRow;
    // pinned: the hash of a row that spells out nothing is the one earlier releases wrote (no replace at upgrade)
    const base = hash('{ key: a, handler: h, cron: "0 6 * * *", tz: UTC }');
    expect(base).toBe('lpxO281w7ZCovw5KNjCP6v');
    expect(hash('{ key: a, handler: h, every: 1h }')).toBe('OewwXH0AhFvcMXWAgeDgZN');
    for (const spelled of ['removeOnComplete: false', 'overlap: skip', 'meta: {}', 'awaitTask: true']) {
      expect([spelled, hash(`{ key: a, handler: h, cron: "0 6 * * *", tz: UTC, ${spelled} }`)]).toEqual([
        spelled,
        base,
      ]);
    }
    // what a row means still counts: runs that overlap, a meta of its own
    expect(hash('{ key: a, handler: h, cron: "0 6 * * *", tz: UTC, overlap: allow }')).not.toBe(base);
    expect(hash('{ key: a, handler: h, cron: "0 6 * * *", tz: UTC, meta: { team: ops } }')).not.toBe(base);
    expect(hash('{ key: a, handler: h, every: 1h, awaitTask: false, overlap: allow }')).toBe(
      hash('{ key: a, handler: h, every: 1h, awaitTask: false }'),
    );
  });

  it('refuses a row with reason, field and fix, applies the others, and leaves the refused keys untouched', () => {
    const read = readSchedules(
      'timers:\n  - { key: dup, handler: h, every: 1m }\n  - { key: bad, handler: h, every: soon }\n  - { key: dup, handler: h, every: 2m }\n  - [not, a, row]\n  - { key: ok, handler: h, every: 1m }\n',
      LIMITS,
    );
    expect(read.rows?.map(({ spec }) => spec.key)).toEqual(['ok']);
    expect(read.problems).toEqual([
      expect.objectContaining({
        row: 1,
        key: 'dup',
        reason: 'invalid',
        field: 'key',
        message: 'the key dup is on row 3 too; its timer stays as it is',
        fix: 'Give each row its own key.',
      }),
      expect.objectContaining({
        row: 2,
        key: 'bad',
        reason: 'invalid',
        field: 'every',
        fix: expect.any(String),
      }),
      expect.objectContaining({
        row: 3,
        key: 'dup',
        reason: 'invalid',
        field: 'key',
        message: 'the key dup is on row 1 too; its timer stays as it is',
      }),
      expect.objectContaining({ row: 4, reason: 'invalid' }),
    ]);
    // Neither row of `dup` wins: the timer under it stays as it was until the file says which one.
    expect([...read.untouched]).toEqual(['dup', 'bad']);
  });

  it("refuses a cron row whose jitter is not shorter than its slots' gap, and leaves its timer as it is", () => {
    // a timer an older release wrote from this row goes on with its jitter (docs/spec.md §3.3c)
    const read = readSchedules(
      'timers:\n  - { key: j, handler: h, cron: "* * * * *", tz: UTC, jitter: 2m }\n',
      LIMITS,
    );
    expect(read.rows).toEqual([]);
    expect(read.problems).toEqual([
      expect.objectContaining({
        row: 1,
        key: 'j',
        reason: 'invalid',
        field: 'jitter',
        fix: expect.stringMatching(/1m/),
      }),
    ]);
    expect([...read.untouched]).toEqual(['j']);
  });

  it.each([
    ['ifExists', '{ key: a, handler: h, every: 1m, ifExists: replace }', 'ifExists'],
    [
      'removeOnComplete: true',
      '{ key: a, handler: h, every: 1m, removeOnComplete: true }',
      'removeOnComplete',
    ],
    [
      'a reserved meta key',
      '{ key: a, handler: h, every: 1m, meta: { sundialOwner: me } }',
      'meta.sundialOwner',
    ],
  ])('refuses %s, which the follower decides', (_name, row, field) => {
    const read = readSchedules(`timers:\n  - ${row}\n`, LIMITS);
    expect(read.rows).toEqual([]);
    expect(read.problems).toEqual([expect.objectContaining({ row: 1, key: 'a', reason: 'invalid', field })]);
  });

  it.each([
    ['not YAML', 'timers: [\n'],
    ['empty', ''],
    ['a bare list', '- { key: a, handler: h, every: 1m }\n'],
    ['another top-level key', 'timers: []\njobs: []\n'],
    ['timers not a list', 'timers: { key: a }\n'],
  ])('refuses a file that is %s as a whole: nothing applied, nothing removed', (_name, text) => {
    const read = readSchedules(text, LIMITS);
    expect(read.rows).toBeNull();
    expect(read.problems).toEqual([
      expect.objectContaining({
        reason: 'invalid',
        message: expect.stringMatching(/^The schedules file is not applied/),
      }),
    ]);
  });

  it('reads a file with a byte order mark and CRLF line ends as the same rows', () => {
    const text = 'timers:\n  - { key: a, handler: h, every: 1m }\n';
    const windows = readSchedules(`\uFEFF${text.replace(/\n/g, '\r\n')}`, LIMITS);
    expect(windows.problems).toEqual([]);
    expect(windows.rows).toEqual(readSchedules(text, LIMITS).rows);
  });

  it('names the line of a YAML error, and refuses a file of comments only as empty', () => {
    const [syntax] = readSchedules('timers:\n  - { key: a, handler: h\n', LIMITS).problems;
    expect(syntax.message).toMatch(/line 3, column 1/);
    expect(readSchedules('# rows go here\n', LIMITS)).toMatchObject({
      rows: null,
      problems: [expect.objectContaining({ message: expect.stringMatching(/no top-level timers list/) })],
    });
  });

  it('reads rows that share fields through an anchor and a merge key', () => {
    const read = readSchedules(
      'timers:\n  - &daily { key: a, handler: h, cron: "0 6 * * *", tz: UTC }\n  - { <<: *daily, key: b }\n',
      LIMITS,
    );
    expect(read.problems).toEqual([]);
    expect(read.rows?.map(({ spec }) => [spec.key, spec.cron, spec.tz])).toEqual([
      ['a', '0 6 * * *', 'UTC'],
      ['b', '0 6 * * *', 'UTC'],
    ]);
  });

  it('reads `timers: []` as no rows: every row of the file removed', () => {
    expect(readSchedules('timers: []\n', LIMITS)).toEqual({ rows: [], problems: [], untouched: new Set() });
  });
});
