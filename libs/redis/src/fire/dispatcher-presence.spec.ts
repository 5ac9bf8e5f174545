import { SundialError } from '@sundial/core';
import { partitionRanges, readPartitionRanges } from '../infra/served-partitions';
import { presenceMember } from './dispatcher-presence';
import { unservedPartitions } from './dispatcher-presence-watch';
import { TimerRunner } from './timer-runner';

/** docs/spec.md §4.2: `dispatcherGraceMs` is refused, saying why and what to write, before anything opens. */
describe('TimerRunner dispatcherGraceMs', () => {
  it.each([0, 299, -1, 1.5, Number.NaN, '15000', null])('refuses %p', (value) => {
    const made = () =>
      new TimerRunner({
        connection: 'redis://127.0.0.1:1',
        handlers: {},
        dispatcherGraceMs: value as number,
      });
    expect(made).toThrow(SundialError);
    expect(made).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'dispatcherGraceMs',
        message: expect.stringContaining('is not an integer of at least 300'),
        fix: expect.stringContaining('leave it out for the default (15000)'),
      }),
    );
  });
});

/** docs/spec.md §4.2: which partitions the announcements `P:dispatchers` holds serve, for a runner. */
describe('unservedPartitions', () => {
  const member = (served: number[], count = 8) => presenceMember('host-1', count, served);

  it('is every partition with no announcement, none once their union covers them', () => {
    expect(unservedPartitions([], 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(unservedPartitions([member([0, 1, 2, 3]), member([2, 3, 4, 5])], 8)).toEqual([6, 7]);
    expect(unservedPartitions([member([0, 1, 2, 3]), member([4, 5, 6, 7])], 8)).toEqual([]);
    expect(unservedPartitions([presenceMember('h', 1, [0])], 1)).toEqual([]);
  });

  it('takes a member of another partition count (a repartition under way) or one it cannot read as serving all', () => {
    expect(unservedPartitions([member([0], 4)], 8)).toEqual([]);
    expect(unservedPartitions(['host-1|8|0-3;v2'], 8)).toEqual([]);
    expect(unservedPartitions(['host-1|8|9'], 8)).toEqual([]);
    expect(unservedPartitions(['host-1'], 8)).toEqual([]);
  });

  it('reads a host name holding the separator', () => {
    expect(unservedPartitions([presenceMember('a|b-1', 8, [0, 1, 2, 3, 4, 5, 6])], 8)).toEqual([7]);
  });
});

describe('partitionRanges', () => {
  it.each([
    [[0], '0'],
    [[6, 7], '6,7'],
    [[0, 1, 2, 3, 6, 7], '0-3,6,7'],
    [[1, 2, 3, 5, 7, 8, 9, 10], '1-3,5,7-10'],
  ])('writes %p as %p, and reads it back', (partitions, text) => {
    expect(partitionRanges(partitions)).toBe(text);
    expect(readPartitionRanges(text, 11)).toEqual(partitions);
  });

  it('reads nothing else, nor a partition past the count', () => {
    for (const text of ['', '3-1', '0,,1', 'a', '0-1000000000', ' 1'])
      expect(readPartitionRanges(text, 8)).toBeNull();
  });
});
