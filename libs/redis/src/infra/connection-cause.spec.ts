import { EventEmitter } from 'node:events';
import { ConnectionCause } from './connection-cause';

// A connection's events as ioredis emits them; the cause reads nothing else of it.
function connection(): EventEmitter {
  return new EventEmitter();
}

describe('ConnectionCause', () => {
  const wrapper = new Error('Reached the max retries per request limit (which is 1). Refer to …');

  it('names the last error the connection reported for a command that failed with a wrapper', () => {
    const redis = connection();
    const cause = new ConnectionCause(redis);
    redis.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    redis.emit('error', new Error('Connection is closed.'));
    expect(cause.of(wrapper).message).toBe('connect ECONNREFUSED 127.0.0.1:6390');
    cause.stop();
  });

  it("keeps a command's own error when it says more than a wrapper", () => {
    const redis = connection();
    const cause = new ConnectionCause(redis);
    redis.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    const own = new Error('WRONGPASS invalid username-password pair');
    expect(cause.of(own)).toBe(own);
    cause.stop();
  });

  it("does not name an earlier outage's error after the connection was ready again", () => {
    const redis = connection();
    const cause = new ConnectionCause(redis);
    redis.emit('node error', new Error('getaddrinfo ENOTFOUND redis-0'));
    redis.emit('ready');
    expect(cause.of(wrapper)).toBe(wrapper);
    redis.emit('error', new Error('connect ETIMEDOUT'));
    expect(cause.of(wrapper).message).toBe('connect ETIMEDOUT');
    cause.stop();
  });

  it("names a Cluster's node error over ioredis's slots-cache failure, which it keeps only when alone", () => {
    const redis = connection();
    const cause = new ConnectionCause(redis);
    const slotsFailed = new Error('Failed to refresh slots cache.');
    redis.emit('error', slotsFailed);
    expect(cause.of(wrapper)).toBe(slotsFailed);
    redis.emit('node error', new Error('connect ECONNREFUSED 127.0.0.1:7001'));
    redis.emit('error', slotsFailed);
    expect(cause.of(wrapper).message).toBe('connect ECONNREFUSED 127.0.0.1:7001');
    cause.stop();
  });

  it('stops listening at stop', () => {
    const redis = connection();
    const cause = new ConnectionCause(redis);
    cause.stop();
    expect(redis.eventNames()).toEqual([]);
    redis.on('error', () => undefined);
    redis.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    expect(cause.of(wrapper)).toBe(wrapper);
  });
});
