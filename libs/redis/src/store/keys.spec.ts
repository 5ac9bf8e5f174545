import { isSundialError } from '@sundial/core';
import { CLUSTER_SLOTS, fnv1a32, keySlot, SundialKeys } from './keys';

describe('fnv1a32', () => {
  it('matches the published FNV-1a 32-bit test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });
});

describe('SundialKeys', () => {
  it('puts every key of a partition under the hash tag {pN}', () => {
    const keys = new SundialKeys('sundial', 1);
    expect(keys.partitionOf('invoice:42')).toBe(0);
    expect(keys.base(0)).toBe('sundial:{p0}:');
    expect(keys.row('invoice:42')).toBe('sundial:{p0}:t:invoice:42');
    expect(keys.tombstone('invoice:42')).toBe('sundial:{p0}:x:invoice:42');
    expect([keys.due(0), keys.armed(0), keys.keys(0), keys.leases(0), keys.seq(0)]).toEqual([
      'sundial:{p0}:due',
      'sundial:{p0}:armed',
      'sundial:{p0}:keys',
      'sundial:{p0}:leases',
      'sundial:{p0}:seq',
    ]);
    expect([keys.idChunks(0), keys.idBitmap(0, '0:1')]).toEqual(['sundial:{p0}:ic', 'sundial:{p0}:i:0:1']);
    expect(keys.eventsChannel).toBe('sundial:events');
    expect(keys.abortChannel).toBe('sundial:abort');
    expect(keys.queueName(0)).toBe('sundial-fire-{p0}');
    expect(keys.bullPrefix).toBe('sundial');
  });

  it('partitions by fnv1a32(key) mod P and spreads keys over every partition', () => {
    const keys = new SundialKeys('app', 4);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const key = `user:${i}`;
      expect(keys.partitionOf(key)).toBe(fnv1a32(key) % 4);
      seen.add(keys.partitionOf(key));
    }
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
    expect(keys.all()).toEqual([0, 1, 2, 3]);
    const key = 'user:7';
    const n = keys.partitionOf(key);
    expect(keys.row(key)).toBe(`app:{p${n}}:t:${key}`);
  });

  it('reads the partition back from an id, refusing ids that are not ours', () => {
    const keys = new SundialKeys('sundial', 3);
    expect(keys.partitionOfId('17p2')).toBe(2);
    expect(keys.partitionOfId('17p3')).toBeNull();
    expect(keys.partitionOfId('17')).toBeNull();
    expect(keys.partitionOfId('p1')).toBeNull();
  });

  it('on a Redis Cluster, gives partition N of P a tag in the N-th of P equal slot ranges', () => {
    for (const partitions of [1, 2, 3, 8, 64]) {
      const keys = new SundialKeys('sundial', partitions, 'spread');
      for (const n of keys.all()) {
        const tag = keys.tag(n);
        expect(tag).toMatch(new RegExp(`^\\{p${n}\\.\\d+\\}$`));
        const slot = keySlot(tag.slice(1, -1));
        expect(Math.floor((slot * partitions) / CLUSTER_SLOTS)).toBe(n);
        expect(keys.base(n)).toBe(`sundial:${tag}:`);
        expect(keys.queueName(n)).toBe(`sundial-fire-${tag}`);
      }
    }
  });

  it('computes the slot as Redis CLUSTER KEYSLOT does', () => {
    // Values from redis-server 7.0 `CLUSTER KEYSLOT {p0}` etc., and the spec's own test vector.
    expect(keySlot('p0')).toBe(15882);
    expect(keySlot('p3')).toBe(3689);
    expect(keySlot('p7')).toBe(3821);
    expect(keySlot('123456789')).toBe(0x31c3 % CLUSTER_SLOTS);
  });

  // Before, a plain RangeError with no reason, field or fix, unlike every other bad option.
  it('refuses a partition count that is not an integer from 1 to 1024, as a SundialError on partitions', () => {
    for (const partitions of [0, 1.5, 1025, Number.NaN]) {
      let refusal: unknown;
      try {
        new SundialKeys('sundial', partitions);
      } catch (error) {
        refusal = error;
      }
      expect(isSundialError(refusal) && refusal.toJSON()).toMatchObject({
        reason: 'invalid',
        field: 'partitions',
        message: expect.stringContaining('from 1 to 1024'),
        fix: expect.stringContaining('SUNDIAL_PARTITIONS'),
      });
    }
    expect(new SundialKeys('sundial', 1024).all()).toHaveLength(1024);
  });
});
