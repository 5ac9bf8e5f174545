import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { childOutput } from '@sundial/testing/harness';

const ROOT = join(__dirname, '..', '..');
export const CLOSURES = join(ROOT, 'libs', 'redis', 'src', 'infra', 'ioredis-closures.ts');

/**
 * The bytes of the young generation that each scavenge kept (as `--trace-gc-nvp`'s
 * `new_space_survived`), in a plain node process (no jest) that awaits `call` (an expression on
 * `redis`, an ioredis client of `url`) `times` times one after another, with or without the
 * replacements of ioredis-closures.ts. Read by `v8.GCProfiler`, from a full GC after start-up; the
 * first scavenge is left out.
 *
 * It runs with `--max-opt=2` (at most Maglev): a tight loop soon gets ioredis's command path into
 * TurboFan, whose code allocated the command's `reject` closure young, while in a loop paced by
 * timers (as a worker's commands are) `initPromise` stayed in Maglev (`--trace-opt`) and ~1 MB a
 * scavenge survived for the whole run.
 */
export async function survivedPerScavenge(
  url: string,
  options: { patched: boolean; call: string; times: number },
): Promise<number[]> {
  const program = `
    const ts = require('typescript');
    const { readFileSync } = require('node:fs');
    const { GCProfiler } = require('node:v8');
    require('tsconfig-paths').register({ baseUrl: ${JSON.stringify(ROOT)}, paths: { '@sundial/*': ['libs/*/src'] } });
    require.extensions['.ts'] = (module, file) => module._compile(ts.transpileModule(readFileSync(file, 'utf8'),
      { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText, file);
    if (${options.patched}) require(${JSON.stringify(CLOSURES)}).installIoredisClosures();
    const Redis = require('ioredis').default;
    const redis = new Redis(${JSON.stringify(url)});
    const json = JSON.stringify({ id: 'x'.repeat(20), payload: { a: 1, b: [1, 2, 3], c: 'hello world' } });
    (async () => {
      await redis.ping();
      gc();
      const profiler = new GCProfiler();
      profiler.start();
      for (let i = 0; i < ${options.times}; i++) await ${options.call};
      const { statistics } = profiler.stop();
      const newSpace = (spaces) => spaces.find((space) => space.spaceName === 'new_space').spaceUsedSize;
      const scavenges = statistics.filter((gc) => gc.gcType === 'Scavenge');
      console.log(JSON.stringify(scavenges.map((gc) => newSpace(gc.afterGC.heapSpaceStatistics))));
      await redis.quit();
    })();`;
  const child = spawn(process.execPath, ['--max-opt=2', '--expose-gc', '-e', program], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // its whole output: 'exit' may come before the last of it (childOutput)
  const { lines, ended } = childOutput(child);
  const { code } = await ended;
  const out = lines.join('\n');
  if (code !== 0) throw new Error(`the child ended with ${code}: ${out}`);
  const survived = JSON.parse(out) as number[];
  if (survived.length < 4) throw new Error(`too few scavenges to compare: ${out}`);
  return survived.slice(1);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
