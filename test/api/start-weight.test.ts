import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SwaggerModule } from '@nestjs/swagger';
import { DIST, ensureBuilt, startRedis } from '@sundial/testing/harness';
import { startScheduler } from '../local-cluster';

/**
 * The packages an app's modules load, read in a child process (`node dist/...`, as the apps run): a
 * resolve hook sees both `require` and `import`, which `require.cache` alone would not (Nest 12 and
 * @nestjs/swagger are ES modules). Only loading, no start: the app factories are required, not called.
 */
async function packagesLoadedBy(entries: string[]): Promise<string[]> {
  const script = `
    const packages = new Set();
    require('node:module').registerHooks({
      resolve(specifier, context, next) {
        const resolved = next(specifier, context);
        const found = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);
        if (found) packages.add(found[1]);
        return resolved;
      },
    });
    require(${JSON.stringify(join(DIST, 'libs/server/src/register-paths.js'))});
    for (const entry of ${JSON.stringify(entries.map((entry) => join(DIST, entry)))}) require(entry);
    process.stdout.write(JSON.stringify([...packages]));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script]);
  return JSON.parse(stdout) as string[];
}

// Each package costs every app start its CPU (~2 s a start before, on 2 cores that CI shares among some
// 100 starts): what the default configuration does not use stays unloaded.
describe('what an app start loads', () => {
  let worker: string[] = [];
  let scheduler: string[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    [worker, scheduler] = await Promise.all([
      packagesLoadedBy(['apps/worker/src/worker-app.js']),
      packagesLoadedBy([
        'apps/scheduler/src/scheduler-app.js',
        'apps/scheduler/src/redis-scheduler-service.js',
      ]),
    ]);
    // deadline: a stale dist is rebuilt first (npm run build, ~1.5 min); then each child loads an app's
    // ~1,600-2,000 modules, ~1.5 s of CPU: 5-10 s at load 15 on 2 cores
  }, 300_000);

  // @nestjs/swagger is some 530 modules (~0.25 s CPU): the scheduler documents the shared probes itself.
  it('the worker loads no @nestjs/swagger (the scheduler does, for its OpenAPI document)', () => {
    expect(worker).toEqual(expect.arrayContaining(['@nestjs/core', '@nestjs/terminus', 'bullmq']));
    expect(worker).not.toContain('@nestjs/swagger');
    expect(scheduler).toContain('@nestjs/swagger');
  });

  it('the scheduler loads yaml only to read a schedules file (SUNDIAL_SCHEDULES_FILE)', () => {
    expect(scheduler).toEqual(expect.arrayContaining(['@nestjs/swagger', 'bullmq']));
    expect(scheduler).not.toContain('yaml');
  });

  // register-paths maps `@sundial/*` itself: tsconfig-paths cost each start ~15 ms and ~3,000 disk probes.
  it('the path aliases load no tsconfig-paths (nor its json5)', () => {
    for (const loaded of [worker, scheduler]) {
      expect(loaded).toContain('@nestjs/core');
      expect(loaded).not.toContain('tsconfig-paths');
      expect(loaded).not.toContain('json5');
    }
  });
});

describe('what a scheduler start does', () => {
  it('builds the OpenAPI document at its first use (an OPTIONS, /docs-json), once, not at start', async () => {
    const createDocument = jest.spyOn(SwaggerModule, 'createDocument');
    const redis = await startRedis();
    const app = await startScheduler(redis.url).catch(async (error: unknown) => {
      await redis.stop();
      throw error;
    });
    try {
      expect(createDocument).not.toHaveBeenCalled();
      const options = await fetch(`${app.url}/v1/timers/a`, { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('GET, PUT, DELETE, HEAD, OPTIONS');
      expect(createDocument).toHaveBeenCalledTimes(1);
      const { paths } = (await (await fetch(`${app.url}/docs-json`)).json()) as { paths: object };
      expect(Object.keys(paths)).toContain('/v1/timers/{key}');
      expect(createDocument).toHaveBeenCalledTimes(1);
    } finally {
      createDocument.mockRestore();
      await app.close();
      await redis.stop();
    }
  });
});
