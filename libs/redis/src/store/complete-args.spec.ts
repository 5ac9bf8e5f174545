import { type Completion, completeArgs } from './complete-args';

const run = (key: string, more: Partial<Completion> = {}): Completion => ({
  id: `id-${key}`,
  key,
  version: 1,
  runCount: 1,
  mode: 'free',
  outcome: 'ok',
  missed: 0,
  overlap: 0,
  ...more,
});

/** complete.lua's header: ARGV[3] the worker of the batch's runs; a run of another names its own. */
describe('completeArgs: the worker that ran each run', () => {
  it("is ARGV[3] for a worker's batch, and no run repeats it", () => {
    const [runs, worker, ...rest] = completeArgs([
      run('a', { workerId: 'w1' }),
      run('b', { workerId: 'w1' }),
    ]);
    expect(worker).toBe('w1');
    expect(rest).toEqual([]);
    expect((JSON.parse(runs) as unknown[][]).map((r) => r.length)).toEqual([14, 14]);
  });

  it("a run of another worker, or of none (a lost run), names its own ('' none)", () => {
    const args = completeArgs([
      run('a', { workerId: 'w1' }),
      run('b', { workerId: 'w2' }),
      run('c', { mode: 'held', outcome: 'lost' }),
    ]);
    expect(args[1]).toBe('w1');
    expect((JSON.parse(args[0]) as unknown[][]).map((r) => r[14])).toEqual([undefined, 'w2', '']);
  });

  it("a call naming no worker sends no ARGV[3] (a reconciler's, a release before's)", () => {
    const args = completeArgs([run('a', { mode: 'held', outcome: 'lost' })]);
    expect(args).toHaveLength(1);
    expect((JSON.parse(args[0]) as unknown[][])[0]).toHaveLength(14);
  });
});
