import { dataLoss, dataRewound } from './data-loss';
import { reportDataLoss } from './layout-watch';

/**
 * docs/spec.md §5.5 (`onDataLost`'s DataLoss) and §6.3 "Data loss": the fields a loss and a restore
 * carry, as written there. The spec said a restore's line had "the same fields" and named no
 * `rewound` at all.
 */
describe('DataLoss: the fields of a loss and of a restore, as the spec lists them', () => {
  const documented = [
    'prefix',
    'partitions',
    'count',
    'all',
    'since',
    'marker',
    'message',
    'fix',
    'reset',
    'rewound',
  ];
  const since = Date.parse('2026-12-01T00:00:00Z');
  const rewound = { counter: 'p:{p1}:seq', read: 3, seen: 9, name: '1800000000000-abc', first: true };

  it('a restore: every partition, marker rewound:<name>, rewound true; its line has fix, prefix and since only', () => {
    const loss = dataRewound({ prefix: 'p', count: 3, since, rewound, reset: true });
    expect(Object.keys(loss).sort()).toEqual([...documented].sort());
    expect(loss).toMatchObject({
      partitions: [0, 1, 2],
      count: 3,
      all: true,
      since,
      marker: 'rewound:1800000000000-abc',
      reset: true,
      rewound: true,
    });
    const error = jest.fn();
    reportDataLoss({ error }, { dataLost: () => undefined })(loss);
    expect(error).toHaveBeenCalledWith(expect.stringMatching(/^Redis went back in time under prefix 'p'/), {
      fix: loss.fix,
      prefix: 'p',
      since: '2026-12-01T00:00:00.000Z',
    });
  });

  it('a shard lost alone: its partitions, rewound false; its line names the partitions', () => {
    const loss = dataLoss({ prefix: 'p', partitions: [1], count: 3, markers: [`${since}-x`], reset: false });
    expect(Object.keys(loss).sort()).toEqual([...documented].sort());
    expect(loss).toMatchObject({ partitions: [1], all: false, since, marker: `${since}-x`, rewound: false });
    const error = jest.fn();
    reportDataLoss({ error }, { dataLost: () => undefined })(loss);
    expect(error.mock.calls[0][1]).toEqual({
      fix: loss.fix,
      prefix: 'p',
      since: '2026-12-01T00:00:00.000Z',
      partitions: [1],
    });
  });
});
