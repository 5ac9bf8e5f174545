import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { SundialKeys } from '@sundial/redis';
import { ensureBuilt, type RedisServer, ROOT, startRedis, waitFor } from '@sundial/testing/harness';
import { documentedAcl } from '../documented-acl';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';
import { repoFile } from './tools';

const PASSWORD = 'runbook-secret';
const PARTITIONS = 2;

/**
 * Every `redis-cli -u "$REDIS…_URL" …` of docs/operations.md, in a code block or a code span (wrapped
 * lines joined), with a made-up name for a placeholder such as `<appName>`.
 */
function runbookCommands(): string[] {
  const text = repoFile('docs/operations.md');
  const fenced = /```\w*\n([\s\S]*?)```/g;
  const blocks = [...text.matchAll(fenced)].flatMap((m) => m[1]!.split('\n'));
  const prose = text.replace(fenced, '');
  const spans = [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' '));
  return [...blocks, ...spans]
    .filter((line) => /^redis-cli -u "\$REDIS\w*_URL" /.test(line))
    .map((line) => line.replace(/<appName>/g, 'billing'));
}

/** A runbook line as the on-call runs it in a shell: its output (stdout and stderr) and exit status. */
function shell(command: string, env: Record<string, string>): { output: string; status: number | null } {
  const result = spawnSync('sh', ['-c', command], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
  });
  // redis-cli's warning about a password on its command line is no answer of Redis
  const stderr = result.stderr.replace(/^Warning: Using a password .*\n/gm, '');
  return { output: `${result.stdout}${stderr}`, status: result.status };
}

/**
 * The Redis checks of the runbooks, run as written against a cluster under the documented least-privilege
 * user (REDIS_URL, the apps' own URL the on-call has at hand) and an administrator (REDIS_ADMIN_URL).
 * Before, `CLIENT LIST` and `ACL LOG` ran on `$REDIS_URL`: the apps' user is refused both (NOPERM),
 * and `CLIENT LIST | grep -c …` of the refusal printed 0, "no consumer connection", for a partition
 * whose worker was consuming.
 */
describe("the runbooks' redis-cli commands, as the on-call runs them", () => {
  let redis: RedisServer;
  let admin: Redis;
  let apps: RunningApp[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    await admin.call('ACL', 'SETUSER', ...documentedAcl(PASSWORD));
    const url = `redis://sundial:${PASSWORD}@127.0.0.1:${redis.port}`;
    env = { REDIS_URL: url, REDIS_ADMIN_URL: redis.url };
    // partition 0 served by no worker: its fire jobs wait, as in SundialOverdueBacklogStuck
    const scheduler = await startScheduler(url, { partitions: PARTITIONS });
    apps = [scheduler, await startWorker(url, {}, { partitions: PARTITIONS, serve: [1] })];
    const keys = new SundialKeys('sundial', PARTITIONS);
    const stuck = Array.from({ length: 8 }, (_, n) => `stuck:${n}`).filter(
      (key) => keys.partitionOf(key) === 0,
    );
    for (const key of stuck)
      expect((await scheduler.api('POST', '/v1/timers', { key, handler: 'log', delay: 50 })).status).toBe(
        201,
      );
    await waitFor(async () => (await admin.llen(`sundial:${keys.queueName(0)}:wait`)) > 0, {
      what: "partition 0's fire job waiting",
    });
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    admin?.disconnect();
    await redis?.stop();
  });

  it('each runs without a refusal', () => {
    const commands = runbookCommands();
    expect(commands.length).toBeGreaterThanOrEqual(8);
    const refused = commands
      .map((command) => ({ command, ...shell(command, env) }))
      // a pipeline's status is grep's (1 for a count of 0): a failed redis-cli is told by its output
      .filter(
        ({ command, output, status }) =>
          (status !== 0 && !command.includes('|')) || /NOPERM|^ERR|WRONGPASS|not found/m.test(output),
      );
    expect(refused).toEqual([]);
  });

  // On a Redis Cluster the runbooks' keys need each partition's spread tag (`{pN.s}`), which no
  // command printed: the on-call had docs/design.md's rule and no `s`.
  it("SundialOverdueBacklogStuck's kubectl exec line prints the spread tags of the partitions", async () => {
    const text = repoFile('docs/operations.md');
    const line = text
      .split('\n')
      .find((l) => l.startsWith('kubectl -n sundial exec deploy/sundial-scheduler -- node'));
    expect(line).toBeDefined();
    const [, prefix, partitions] = /new SundialKeys\('(\w+)', (\d+), 'spread'\)/.exec(line!)!;
    // as in the image: its WORKDIR holds dist, where the checkout's build puts it too
    await ensureBuilt();
    const printed = spawnSync('sh', ['-c', line!.split(' -- ')[1]!], { cwd: ROOT, encoding: 'utf8' });
    const keys = new SundialKeys(prefix, Number(partitions), 'spread');
    expect({ out: printed.stdout.trim(), err: printed.stderr }).toEqual({
      out: keys
        .all()
        .map((n) => keys.tag(n))
        .join(' '),
      err: '',
    });
  });

  it("SundialOverdueBacklogStuck's checks tell the partition no worker consumes from the one a worker does", () => {
    const stuckSection = repoFile('docs/operations.md').split('\n### SundialOverdueBacklogStuck\n')[1]!;
    const lines = runbookCommands().filter((command) => stuckSection.split('\n### ')[0]!.includes(command));
    const run = (pattern: RegExp, partition: number): string => {
      const command = lines.find((line) => pattern.test(line))!;
      expect(command).toBeDefined();
      return shell(command.replace(/\{p0\}/g, `{p${partition}}`), env).output.trim();
    };
    expect(run(/:armed' /, 0)).toMatch(/^stuck:/);
    expect(Number(run(/LLEN/, 0))).toBeGreaterThan(0);
    // the consumers blocked on each partition's queue: none on 0, the worker's one on 1
    expect([run(/CLIENT LIST/, 0), run(/CLIENT LIST/, 1)]).toEqual(['0', '1']);
  });
});
