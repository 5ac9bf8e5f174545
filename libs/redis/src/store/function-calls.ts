import { refusals } from '@sundial/core';
import { type Redis, ReplyError } from 'ioredis';
import { primaries, type RedisClient } from '../infra/connection';
import type { FunctionLibrary } from './script-functions';
import type { ScriptArg } from './script-loader';

type Fcall = (name: string, numkeys: number, ...args: ScriptArg[]) => Promise<unknown>;

/** The loads under way per connection: calls that find their function missing at once share one. */
const loading = new WeakMap<RedisClient, Map<string, Promise<void>>>();

/**
 * FCALLs a library's function with one key. Its FCALL is written in this turn, as a command's
 * (RidingClaims corks the socket around it). A Redis that has not the library ("Function not found": a
 * restart without persistence, a `FUNCTION FLUSH`, a new Cluster primary) gets it, and the call goes
 * once more: a call that found no function ran nothing.
 */
export function callFunction(
  redis: RedisClient,
  library: FunctionLibrary,
  key: string,
  ...args: ScriptArg[]
): Promise<unknown> {
  const fcall = redis.fcall as unknown as Fcall;
  return fcall.call(redis, library.name, 1, key, ...args).catch(async (error: unknown) => {
    if (!/Function not found/i.test(replyText(error))) throw error;
    await loadOnce(redis, library);
    return fcall.call(redis, library.name, 1, key, ...args);
  });
}

/**
 * Loads the libraries into every primary (a Cluster's each: a function library is per node, copied to
 * its replicas), after checking each runs Redis 7.0 or later (`refusals.redisVersion` otherwise).
 */
export async function loadLibraries(
  redis: RedisClient,
  libraries: readonly FunctionLibrary[],
): Promise<void> {
  await Promise.all(
    (await primaries(redis)).map(async (node) => {
      await checkVersion(node);
      await Promise.all(libraries.map((library) => loadInto(node, library)));
    }),
  );
}

function loadOnce(redis: RedisClient, library: FunctionLibrary): Promise<void> {
  const under = loading.get(redis) ?? new Map<string, Promise<void>>();
  loading.set(redis, under);
  const pending = under.get(library.name);
  if (pending) return pending;
  const load = primaries(redis)
    .then((nodes) => Promise.all(nodes.map((node) => loadInto(node, library))))
    .then(() => undefined)
    .finally(() => under.delete(library.name));
  under.set(library.name, load);
  return load;
}

/** FUNCTION LOAD; a library already there is the same code (its name ends with the code's hash). */
async function loadInto(node: Redis, library: FunctionLibrary): Promise<void> {
  try {
    await node.call('FUNCTION', 'LOAD', library.code);
  } catch (error) {
    if (/unknown command/i.test(replyText(error))) throw refusals.redisVersion(nodeName(node), 'before 7.0');
    if (/^NOPERM/.test(replyText(error)))
      throw refusals.functionLoadRefused(nodeName(node), replyText(error));
    if (!/already exists/i.test(replyText(error))) throw error;
  }
}

/** `INFO server`'s `redis_version`: 7.0 or later (an INFO refused is left to FUNCTION LOAD to refuse). */
async function checkVersion(node: Redis): Promise<void> {
  let info: string;
  try {
    info = await node.info('server');
  } catch (error) {
    if (error instanceof ReplyError) return;
    throw error;
  }
  const version = /^redis_version:(\S+)/m.exec(info)?.[1];
  const major = Number(version?.split('.')[0]);
  if (version !== undefined && major < 7) {
    throw refusals.redisVersion(nodeName(node), version);
  }
}

function nodeName(node: Redis): string {
  return `${node.options.host ?? 'localhost'}:${node.options.port ?? 6379}`;
}

/** A Redis error reply's text ('' for any other error). */
function replyText(error: unknown): string {
  return error instanceof ReplyError ? (error as Error).message : '';
}
