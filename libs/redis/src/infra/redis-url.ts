import { refusals } from '@sundial/core';
import type { RedisOptions } from 'ioredis';

// A Redis URL read and checked without ioredis, which this file only names the options of: an app checks
// REDIS_URL with its environment before it loads ioredis (a refused start fails fast), and connection.ts
// opens what it names.

/** What a URL names, parsed once (`parseRedisUrl`), before any socket is opened. */
export type RedisTarget =
  | { kind: 'node'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; options: RedisOptions }
  | { kind: 'sentinel'; sentinels: HostPort[]; name: string; options: RedisOptions };

export interface HostPort {
  host: string;
  port: number;
}

const SCHEMES = /^(rediss?)(?:\+(cluster|sentinel))?:\/\/(.*)$/;
const DEFAULT_PORTS = { node: 6379, sentinel: 26379 } as const;

/** Reads a connection URL; a malformed one is refused saying what to write instead. */
export function parseRedisUrl(url: string): RedisTarget {
  const match = SCHEMES.exec(url);
  if (!match) {
    throw invalidUrl(
      url,
      'it does not start with redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://',
    );
  }
  const [, scheme, topology, rest] = match;
  if (topology === undefined) {
    if (rest.includes(','))
      throw invalidUrl(url, 'a redis:// URL names one node, and this one lists several');
    return { kind: 'node', url };
  }
  const [address, query] = rest.split(/\?(.*)/s);
  const at = address.lastIndexOf('@', address.indexOf('/') < 0 ? undefined : address.indexOf('/'));
  const credentials = at < 0 ? '' : address.slice(0, at);
  const [hostList, ...path] = address.slice(at + 1).split('/');
  const defaultPort = topology === 'sentinel' ? DEFAULT_PORTS.sentinel : DEFAULT_PORTS.node;
  const nodes = hostList.split(',').map((entry) => hostPort(url, entry, defaultPort));
  const options: RedisOptions = { ...auth(credentials), ...(scheme === 'rediss' && { tls: {} }) };
  if (topology === 'cluster') {
    if (path.some((part) => part !== '') || query !== undefined) {
      throw invalidUrl(url, 'a Redis Cluster has only database 0, so a cluster URL takes no path or query');
    }
    return { kind: 'cluster', nodes, options };
  }
  const [name = '', db, ...extra] = path;
  if (name === '' || extra.length > 0 || (db !== undefined && !/^\d+$/.test(db))) {
    throw invalidUrl(url, 'a Sentinel URL ends with /<master name> and optionally /<database number>');
  }
  return {
    kind: 'sentinel',
    sentinels: nodes,
    name: decodeURIComponent(name),
    options: {
      ...options,
      ...(db !== undefined && { db: Number(db) }),
      // rediss+sentinel://: TLS to the Sentinels and to the primary they name (ioredis connects to the
      // primary in plain TCP, `tls` or not, unless enableTLSForSentinelMode is set)
      ...(scheme === 'rediss' && { enableTLSForSentinelMode: true, sentinelTLS: {} }),
      ...sentinelAuth(url, query),
    },
  };
}

/**
 * A Sentinel URL's query: the Sentinels' own credentials, which are not Redis's (`user:password@` is
 * the primary's): `?sentinelUsername=<user>&sentinelPassword=<password>`, URL-encoded.
 */
function sentinelAuth(url: string, query = ''): Pick<RedisOptions, 'sentinelUsername' | 'sentinelPassword'> {
  const given: Record<string, string> = {};
  for (const pair of query.split('&').filter((part) => part !== '')) {
    const [field, value = ''] = pair.split(/=(.*)/s);
    if (field !== 'sentinelUsername' && field !== 'sentinelPassword') {
      throw invalidUrl(url, `a Sentinel URL takes sentinelUsername and sentinelPassword, not ${field}`);
    }
    given[field] = decodeURIComponent(value);
  }
  return given;
}

function hostPort(url: string, entry: string, defaultPort: number): HostPort {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
  const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
  if (!match || port < 1 || port > 65_535) {
    throw invalidUrl(url, `${JSON.stringify(entry)} is not host or host:port`);
  }
  return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port };
}

/** `user:password@` or `:password@` (the `default` user), URL-encoded as in a redis:// URL. */
function auth(credentials: string): Pick<RedisOptions, 'username' | 'password'> {
  if (credentials === '') return {};
  const colon = credentials.indexOf(':');
  const [user, password] =
    colon < 0 ? ['', credentials] : [credentials.slice(0, colon), credentials.slice(colon + 1)];
  return {
    ...(user !== '' && { username: decodeURIComponent(user) }),
    ...(password !== '' && { password: decodeURIComponent(password) }),
  };
}

/** A Redis URL as logs, replies and the CLI show it: Redis's and the Sentinels' passwords as `***`. */
export function urlForDisplay(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@').replace(/(sentinelPassword=)[^&]*/g, '$1***');
}

function invalidUrl(url: string, why: string): Error {
  return refusals.invalid(
    'connection',
    `The Redis URL ${urlForDisplay(url)} cannot be used: ${why}.`,
    'Write redis://host:port for one node, redis+cluster://host1:port1,host2:port2 for a Redis Cluster, or redis+sentinel://host1:port1,host2:port2/mastername for Sentinel (rediss… for TLS; ?sentinelPassword=… when the Sentinels have a password of their own).',
  );
}
