import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DIST, ensureBuilt, within } from '@sundial/testing/harness';

const run = promisify(execFile);
/** a start refused by its config exits before it loads Nest's app; a loaded 2-core host takes seconds */
const EXIT_DEADLINE_MS = 30_000; // deadline
/** a build, when dist is older than a source */
const BUILD_DEADLINE_MS = 300_000; // deadline

/**
 * The cases run side by side (`it.concurrent`, jest's maxConcurrency at a time): each is a process
 * start and exit, one after the other 11 of them took 29 s of a loaded run. A concurrent case starts
 * before any beforeAll has run, so each awaits the one build itself.
 */
let built: Promise<void> | undefined;
const build = (): Promise<void> => (built ??= ensureBuilt());

/**
 * docs/spec.md §5.4: a bad variable stops an app at start, exit 1, its one fatal line carrying the
 * `invalid` refusal (field the variable, message, fix), as an operator reading the pod's log needs it.
 * Before, a bad number's line had a bare Error (no reason, field or fix), as had LOG_LEVEL's,
 * SUNDIAL_HTTP_ALLOW's and a SUNDIAL_HANDLERS_MODULE that does not load; SUNDIAL_LEDGER's came from Nest's
 * wiring (no `could not start`); PORT=70000 was taken (the listen failed after the Redis wait), and a
 * SUNDIAL_COMMAND_TIMEOUT_MS past Node's longest timer made every Redis reply time out at once.
 *
 * And it exits before it loads the app (main.ts reads and checks the whole environment first): not Nest,
 * Express, BullMQ, ioredis, the OpenTelemetry SDK, nor @sundial/redis's or @sundial/server's index, nor
 * Node's `http` (which tracing must see loaded after it on a start that goes on). A refused start loaded
 * ~930 modules, 0.6–0.8 s of CPU on this 2-core host (a bad ConfigMap crash-looped slowly); now ~117,
 * under 0.1 s (docs/design.md "Each suite's CPU"). The hook that lists them: libs/testing/src/loaded-modules-hook.ts.
 */
describe('an app started with a bad variable', () => {
  it.concurrent.each([
    ['worker', 'SUNDIAL_LEASE_MS', 'abc'],
    ['worker', 'SUNDIAL_PARTITIONS', '0'],
    ['worker', 'SUNDIAL_SHUTDOWN_GRACE_MS', '-5'],
    ['worker', 'PORT', '70000'],
    ['scheduler', 'SUNDIAL_LEDGER', 'lots'],
    ['scheduler', 'SUNDIAL_RECONCILE_MS', '5s'],
    ['scheduler', 'SUNDIAL_PREFIX', 'a{b}'],
    ['scheduler', 'LOG_LEVEL', 'loud'],
    ['worker', 'SUNDIAL_HTTP_ALLOW', 'https://hooks.example.com/x'],
    ['worker', 'SUNDIAL_HANDLERS_MODULE', '/nonexistent/handlers.js'],
    ['worker', 'SUNDIAL_COMMAND_TIMEOUT_MS', '3000000000'],
    ['scheduler', 'SUNDIAL_HTTP_KEEPALIVE_MS', '0'],
    ['scheduler', 'SUNDIAL_CANCEL_ALL_RECORDS', 'yes'],
  ])(
    '%s with %s=%s exits 1 with a fatal line naming it and what to write',
    async (app, name, value) => {
      await build();
      const main = join(DIST, 'apps', app, 'src', 'main.js');
      const hook = join(DIST, 'libs', 'testing', 'src', 'loaded-modules-hook.js');
      // Node's compile cache too, when the run has one (jest.config.js): the variable changes no answer
      const { PATH, NODE_COMPILE_CACHE } = process.env;
      const env = {
        PATH,
        ...(NODE_COMPILE_CACHE && { NODE_COMPILE_CACHE }),
        REDIS_URL: 'redis://127.0.0.1:1',
        [name]: value,
      };
      const exit = await within(
        run(process.execPath, ['--require', hook, main], { env, timeout: EXIT_DEADLINE_MS }).then(
          () => ({ code: 0, stdout: '', stderr: '' }),
          (error: { code: number; stdout: string; stderr: string }) => error,
        ),
        EXIT_DEADLINE_MS + 5_000, // deadline
        `${app} with ${name}=${value}`,
      );
      const fatal = exit.stdout
        .split('\n')
        .filter((line) => line.includes('"level":"fatal"'))
        .map((line) => JSON.parse(line) as { msg: string; err: Record<string, string> });
      expect({ code: exit.code, fatal: fatal.length }).toEqual({ code: 1, fatal: 1 });
      const [{ msg, err }] = fatal as [(typeof fatal)[0]];
      expect({ msg, reason: err.reason, field: err.field }).toEqual({
        msg: `${app} could not start`,
        reason: 'invalid',
        field: name,
      });
      expect(err.message).toContain(value);
      expect(err.fix).toMatch(/\S/);
      expect(heavyLoaded(exit.stderr)).toEqual({ heavy: [], builtins: [], fewerThan200: true });
    },
    BUILD_DEADLINE_MS + EXIT_DEADLINE_MS + 5_000, // deadline
  );
});

/** Packages, and Sundial's files, that only the app needs: a refused start loads none of them. */
const HEAVY =
  /node_modules\/(@nestjs\/|bullmq\/|ioredis\/|express\/|@opentelemetry\/sdk-node\/)|dist\/libs\/(redis|server|client)\/src\/index\.js$/;

/**
 * What of the app the process loaded, from the hook's line: heavy files (HEAVY), `http` and `https`, and
 * whether it loaded fewer than 200 files in all (~120 now; ~930 with the app: a heavy import added back
 * shows here even when it is none of HEAVY's).
 */
function heavyLoaded(stderr: string): { heavy: string[]; builtins: string[]; fewerThan200: boolean } {
  const line = stderr.split('\n').find((text) => text.startsWith('loaded-modules '));
  if (line === undefined) throw new Error(`no loaded-modules line on stderr:\n${stderr}`);
  const { files, builtins } = JSON.parse(line.slice('loaded-modules '.length)) as {
    files: string[];
    builtins: string[];
  };
  return {
    heavy: files.filter((file) => HEAVY.test(file)),
    builtins: builtins.filter((name) => name === 'http' || name === 'https'),
    fewerThan200: files.length < 200,
  };
}
