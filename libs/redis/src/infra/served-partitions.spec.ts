import { SundialError } from '@sundial/core';
import { Dispatcher } from '../fire/dispatcher';
import { Reconciler } from '../fire/reconciler';
import { TimerRunner } from '../fire/timer-runner';
import { servedPartitions } from './served-partitions';

describe('servedPartitions', () => {
  it('is every partition without serve, else the list ascending', () => {
    expect(servedPartitions({ partitions: 4 })).toEqual([0, 1, 2, 3]);
    expect(servedPartitions({})).toEqual([0]);
    expect(servedPartitions({ partitions: 4, serve: [3, 1] })).toEqual([1, 3]);
  });

  it.each([
    [[], 'serve names no partition'],
    [[4], 'serve names 4, which is not a partition'],
    [[-1], 'serve names -1, which is not a partition'],
    [[1.5], 'serve names 1.5, which is not a partition'],
    [[NaN], 'serve names NaN, which is not a partition'],
    [[2, 0, 2], 'serve names partition 2 twice'],
  ])('refuses %j', (serve, problem) => {
    let refusal: unknown;
    try {
      servedPartitions({ partitions: 4, serve });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SundialError);
    expect(refusal).toMatchObject({
      reason: 'invalid',
      field: 'serve',
      message: `${problem}; the partitions are 0 to 3.`,
      fix: expect.stringContaining('leave serve unset to serve them all') as unknown,
    });
  });

  it('names the field it was read from', () => {
    expect(() => servedPartitions({ partitions: 2, serve: [] }, 'SUNDIAL_SERVE_PARTITIONS')).toThrow(
      'SUNDIAL_SERVE_PARTITIONS names no partition',
    );
  });
});

describe('serve on the fire-path classes', () => {
  // Refused before any connection opens: the port is never dialled.
  const options = { connection: 'redis://127.0.0.1:1', partitions: 4, serve: [0, 4] };

  it.each([
    ['Dispatcher', () => new Dispatcher(options)],
    ['Reconciler', () => new Reconciler(options)],
    ['TimerRunner', () => new TimerRunner({ ...options, handlers: {} })],
  ])('%s refuses a bad list at construction', (_name, make) => {
    expect(make).toThrow(SundialError);
    expect(make).toThrow('serve names 4, which is not a partition');
  });
});
