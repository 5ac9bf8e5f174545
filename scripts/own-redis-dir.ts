/**
 * Who uses ./.sundial/redis, the directory of `npm start`'s private redis-server (its AOF): two
 * redis-servers writing one AOF directory corrupt it, so one is started there only when no live one uses
 * it. Each writes `redis-server-<port>.pid` there (`--pidfile`, removed by its clean shutdown, left behind
 * by a SIGKILL or a crash); a pidfile names a live server only when its pid is alive and the Redis on its
 * port says it is that pid, with its data in this directory. A pidfile of a process gone, or of a pid now
 * another process's, names none. No /proc: the same on macOS.
 */
import { readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openRedis } from '@sundial/redis';

export const OWN_REDIS_DIR = resolve('.sundial', 'redis');
const PIDFILE = /^redis-server-(\d+)\.pid$/;

/** A redis-server with its data in ./.sundial/redis, alive. */
export interface OwnDirServer {
  port: number;
  pid: number;
}

/** The pidfile the private redis-server on `port` writes (`--pidfile`). */
export function pidfileFor(port: number | string): string {
  return join(OWN_REDIS_DIR, `redis-server-${port}.pid`);
}

/**
 * The live redis-server a pidfile in ./.sundial/redis names, if any; `gone` lists the pidfiles of
 * processes that no longer exist (to remove once a new one starts: nothing is removed here).
 */
export async function inspectOwnDir(): Promise<{ running?: OwnDirServer; gone: string[] }> {
  const gone: string[] = [];
  for (const name of pidfiles()) {
    const file = join(OWN_REDIS_DIR, name);
    const pid = Number(readText(file).trim());
    const port = Number(PIDFILE.exec(name)![1]);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const alive = processAlive(pid);
    if (alive && (await servesOwnDir(port, pid))) return { running: { port, pid }, gone: [] };
    if (!alive) gone.push(file);
  }
  return { gone };
}

/** Removes pidfiles of processes gone (a SIGKILLed or crashed redis-server's). */
export function removePidfiles(files: string[]): void {
  for (const file of files) rmSync(file, { force: true });
}

/** `CONFIG GET dir` of the Redis at `url`; undefined when it does not answer it. */
export async function redisDir(url: string): Promise<string | undefined> {
  const client = probe(url);
  return client
    .config('GET', 'dir')
    .then((reply) => String((reply as string[])[1]))
    .catch(() => undefined)
    .finally(() => client.disconnect());
}

/** Whether `dir` (a Redis's `dir`) is ./.sundial/redis, links resolved. */
export function isOwnRedisDir(dir: string): boolean {
  return realPath(dir) === realPath(OWN_REDIS_DIR);
}

/** Whether the Redis on 127.0.0.1:`port` is process `pid` with its data in ./.sundial/redis. */
async function servesOwnDir(port: number, pid: number): Promise<boolean> {
  const url = `redis://127.0.0.1:${port}`;
  const client = probe(url);
  const info = await client
    .info('server')
    .catch(() => '')
    .finally(() => client.disconnect());
  if (Number(/^process_id:(\d+)/m.exec(info)?.[1]) !== pid) return false;
  const dir = await redisDir(url);
  return dir !== undefined && isOwnRedisDir(dir);
}

/**
 * A client for one question: no reconnects, a first command fails at once when nothing answers, and
 * within a second when what takes the connection does not answer (a frozen process, not a Redis).
 */
function probe(url: string): ReturnType<typeof openRedis> {
  return openRedis({
    url,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: () => null,
  });
}

function pidfiles(): string[] {
  try {
    return readdirSync(OWN_REDIS_DIR).filter((name) => PIDFILE.test(name));
  } catch {
    return []; // no ./.sundial/redis yet
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return ''; // removed meanwhile: its server shut down
  }
}

/** Whether a process `pid` exists (EPERM: it does, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The path with its links resolved; as given when it does not exist here (another machine's, say). */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
