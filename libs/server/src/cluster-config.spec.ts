import { SundialError } from '@sundial/core';
import { clusterConfigFromEnv, parseServePartitions } from './cluster-config';

describe('SUNDIAL_SERVE_PARTITIONS', () => {
  it('reads numbers and inclusive ranges, ascending', () => {
    expect(parseServePartitions('5-7, 0,2', 8)).toEqual([0, 2, 5, 6, 7]);
    expect(parseServePartitions('3', 4)).toEqual([3]);
    expect(parseServePartitions('0-3', 4)).toEqual([0, 1, 2, 3]);
  });

  it('unset or blank serves every partition', () => {
    expect(parseServePartitions(undefined, 4)).toBeUndefined();
    expect(parseServePartitions('  ', 4)).toBeUndefined();
    expect(clusterConfigFromEnv({ SUNDIAL_PARTITIONS: '4' }).serve).toBeUndefined();
    expect(clusterConfigFromEnv({ SUNDIAL_PARTITIONS: '4', SUNDIAL_SERVE_PARTITIONS: '1-2' }).serve).toEqual([
      1, 2,
    ]);
  });

  it.each([
    ['0,x', 'cannot read "x"'],
    ['0,,1', 'cannot read ""'],
    ['3-1', 'cannot read "3-1"'],
    ['-1', 'cannot read "-1"'],
    ['1.5', 'cannot read "1.5"'],
    ['2-9', 'names 9, which is not a partition'],
    ['0-999999999999', 'names 999999999999, which is not a partition'],
    ['1,0-2', 'names partition 1 twice'],
  ])('refuses %j naming the variable', (text, problem) => {
    const refusal = catching(() => parseServePartitions(text, 4));
    expect(refusal).toBeInstanceOf(SundialError);
    expect(refusal).toMatchObject({ reason: 'invalid', field: 'SUNDIAL_SERVE_PARTITIONS' });
    expect(refusal.message).toContain(problem);
    expect(refusal.fix).toContain('0,2,5-7');
  });

  it('stops the config read at start', () => {
    expect(() => clusterConfigFromEnv({ SUNDIAL_PARTITIONS: '2', SUNDIAL_SERVE_PARTITIONS: '2' })).toThrow(
      'SUNDIAL_SERVE_PARTITIONS names 2, which is not a partition; the partitions are 0 to 1.',
    );
  });
});

describe('SUNDIAL_PREFIX', () => {
  it('a prefix with a brace stops the config read at start, naming the variable', () => {
    // Redis would hash its keys by the braces; 'a:{p1}:x' lands in prefix 'a''s partition 1.
    for (const prefix of ['a:{p1}:x', 'tenant{1}']) {
      expect(() => clusterConfigFromEnv({ SUNDIAL_PREFIX: prefix })).toThrow(
        `SUNDIAL_PREFIX: The key prefix "${prefix}" is not a non-empty string without "{" or "}"`,
      );
    }
    expect(clusterConfigFromEnv({ SUNDIAL_PREFIX: 'a:b' }).prefix).toBe('a:b');
    expect(clusterConfigFromEnv({ SUNDIAL_PREFIX: ' ' }).prefix).toBe('sundial');
  });
});

function catching(call: () => unknown): SundialError {
  try {
    call();
  } catch (error) {
    return error as SundialError;
  }
  throw new Error('expected a refusal');
}

describe('SUNDIAL_LAYOUT_WATCH_MS', () => {
  it('is the layout watch period, 5 s unless set', () => {
    expect(clusterConfigFromEnv({}).layoutWatchMs).toBe(5000);
    expect(clusterConfigFromEnv({ SUNDIAL_LAYOUT_WATCH_MS: ' 250 ' }).layoutWatchMs).toBe(250);
  });

  it.each(['9', '-1', '1.5', 'soon'])('refuses %j at start, naming the variable', (text) => {
    expect(() => clusterConfigFromEnv({ SUNDIAL_LAYOUT_WATCH_MS: text })).toThrow(
      `SUNDIAL_LAYOUT_WATCH_MS must be an integer from 10 to 2147483647; got "${text}".`,
    );
  });
});

describe('SUNDIAL_HTTP_KEEPALIVE_MS', () => {
  it('is the HTTP keep-alive, 65 s unless set (above the proxies’ 60 s)', () => {
    expect(clusterConfigFromEnv({}).httpKeepAliveMs).toBe(65_000);
    expect(clusterConfigFromEnv({ SUNDIAL_HTTP_KEEPALIVE_MS: ' 300 ' }).httpKeepAliveMs).toBe(300);
    expect(clusterConfigFromEnv({ SUNDIAL_HTTP_KEEPALIVE_MS: '2147482647' }).httpKeepAliveMs).toBe(
      2_147_482_647,
    );
  });

  // 0 would keep an idle connection for ever (Node's "no keep-alive timeout"); past the most, Node's
  // socket timer (the keep-alive and its 1 s buffer) would not fit: a warning, and a cut
  it.each(['0', '-1', '1.5', '65s', '2147482648'])('refuses %j at start, naming the variable', (text) => {
    const error = catching(() => clusterConfigFromEnv({ SUNDIAL_HTTP_KEEPALIVE_MS: text }));
    expect({ reason: error.reason, field: error.field, message: error.message, fix: error.fix }).toEqual({
      reason: 'invalid',
      field: 'SUNDIAL_HTTP_KEEPALIVE_MS',
      message: `SUNDIAL_HTTP_KEEPALIVE_MS must be an integer from 1 to 2147482647; got "${text}".`,
      fix: 'Write SUNDIAL_HTTP_KEEPALIVE_MS as a whole number from 1 to 2147482647, or leave it out for the default (65000).',
    });
  });
});
