import type { DueJob, DueTimers, TimerRef } from '../store/fire-commands';
import { JobAssembly } from './job-assembly';

function refs(...keys: string[]): TimerRef[] {
  return keys.map((key) => ({ id: `id-${key}`, key, version: 1, due: 0 }));
}

function reply(...jobs: DueJob[]): DueTimers {
  return { jobs, traced: [], nextDue: null, now: 0 };
}

const keysOf = (jobs: { jobId: string; timers: TimerRef[] }[]) =>
  jobs.map((job) => [job.jobId, job.timers.map((ref) => ref.key)]);

describe('JobAssembly', () => {
  it('fills a job over several calls and gives it back once full, then continues the next', () => {
    const assembly = new JobAssembly(3, 'q');
    expect(assembly.openJob()).toBeUndefined();

    expect(assembly.take(reply({ jobId: 'j1', timers: refs('a', 'b') }))).toEqual([]);
    expect(assembly.openJob()).toEqual({ jobId: 'j1', size: 2 });

    // the call's first timer joins j1 and fills it; the next begins j2
    const full = assembly.take(reply({ jobId: 'j1', timers: refs('c') }, { jobId: 'j2', timers: refs('d') }));
    expect(keysOf(full)).toEqual([['j1', ['a', 'b', 'c']]]);
    expect(assembly.openJob()).toEqual({ jobId: 'j2', size: 1 });
  });

  it('gives back a job that a call fills exactly, and leaves nothing open', () => {
    const assembly = new JobAssembly(2, 'q');
    expect(keysOf(assembly.take(reply({ jobId: 'j1', timers: refs('a', 'b') })))).toEqual([
      ['j1', ['a', 'b']],
    ]);
    expect(assembly.openJob()).toBeUndefined();
    expect(assembly.finish()).toEqual([]);
  });

  it('finish gives back the job still open, once', () => {
    const assembly = new JobAssembly(100, 'q');
    assembly.take(reply({ jobId: 'j1', timers: refs('a') }));
    assembly.take(reply()); // nothing more was due
    expect(keysOf(assembly.finish())).toEqual([['j1', ['a']]]);
    expect(assembly.finish()).toEqual([]);
  });
});
