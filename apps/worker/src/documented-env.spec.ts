import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ledgerSizeFromEnv, SundialError } from '@sundial/core';
import type { Env } from '@sundial/server';
import { ROOT } from '@sundial/testing/harness';
import { schedulerConfigFromEnv } from '../../scheduler/src/scheduler-config';
import { workerConfigFromEnv } from './worker-config';

/**
 * docs/spec.md §5.4 and the README's "Configuration (environment)" are the operators' list of the
 * variables: every one the apps read is in both tables, each table lists only variables an app reads, and
 * the spec's "read by" column says which app reads it. The apps' reads are recorded, not listed by hand.
 */

/** The names `read` looks up in its environment. */
function namesRead(read: (env: Env) => unknown): Set<string> {
  const names = new Set<string>();
  const env = new Proxy<Env>(
    {},
    {
      get: (_target, name) => {
        if (typeof name === 'string') names.add(name);
        return undefined;
      },
    },
  );
  read(env);
  return names;
}

/** The rows of the first markdown table after `heading`: each variable's name, then its other cells. */
function tableRows(file: string, heading: string): string[][] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const from = text.indexOf(`\n${heading}\n`);
  expect(from).toBeGreaterThan(-1);
  const rows: string[][] = [];
  for (const line of text.slice(from + heading.length + 2).split('\n')) {
    if (rows.length > 0 && !line.startsWith('|')) break;
    const cells = line.split('|').map((cell) => cell.trim());
    const name = /^`([A-Z_]+)`$/.exec(cells[1] ?? '');
    if (name) rows.push([name[1]!, ...cells.slice(2, -1)]);
  }
  return rows;
}

const scheduler = namesRead(schedulerConfigFromEnv);
const worker = namesRead(workerConfigFromEnv);
/** Read elsewhere than the apps' config: WORKER_PORT and SUNDIAL_START_REDIS_PORT by `npm start` (scripts/start.ts). */
const READ_ELSEWHERE: Record<string, string> = {
  WORKER_PORT: '`npm start`',
  SUNDIAL_START_REDIS_PORT: '`npm start`',
};

describe('the configuration tables name the variables the apps read', () => {
  const spec = tableRows('docs/spec.md', '### 5.4 Configuration (environment)');
  const readme = tableRows('README.md', '### Configuration (environment)');
  const read = new Set([...scheduler, ...worker, ...Object.keys(READ_ELSEWHERE)]);

  it('docs/spec.md §5.4: every variable read, and who reads it', () => {
    expect(spec.map(([name]) => name).sort()).toEqual([...read].sort());
    for (const [name, readBy] of spec) {
      const apps = [scheduler.has(name!) && 'scheduler', worker.has(name!) && 'worker'].filter(Boolean);
      const said = READ_ELSEWHERE[name!] ?? (apps.length === 2 ? 'both' : apps[0]);
      expect({ name, readBy }).toEqual({ name, readBy: said });
    }
  });

  it("the README's table: every variable read", () => {
    expect(readme.map(([name]) => name).sort()).toEqual([...read].sort());
  });
});

/** What a config read throws for `env`, or undefined when it takes it. */
function refusal(read: (env: Env) => unknown, env: Env): SundialError | undefined {
  try {
    read(env);
    return undefined;
  } catch (error) {
    return error as SundialError;
  }
}

/**
 * The spec's "default" and "minimum" of each integer variable are the apps': unset is the default, the
 * minimum is taken, one less (and a text that is no number) stops the start with the `invalid` refusal
 * naming the variable and what to write. Before, a bad number threw a bare Error (no reason, field or
 * fix) and PORT took 70000 (the listen failed after the wait for Redis).
 */
describe('the documented default and minimum of each integer variable are what the apps do', () => {
  const spec = tableRows('docs/spec.md', '### 5.4 Configuration (environment)');
  const readers = { scheduler: schedulerConfigFromEnv, worker: workerConfigFromEnv };
  const rows = spec.filter(([, readBy, , minimum]) => readBy !== '`npm start`' && /^\d+/.test(minimum!));

  /** The default the spec gives `app` (`3000 scheduler, 3001 worker`, `` `50` ``, `65536`). */
  const documented = (text: string, app: string): number => {
    const own = new RegExp(`(\\d+) ${app}`).exec(text);
    return Number((own?.[1] ?? text).replace(/[`,]/g, ''));
  };

  it.each(rows.map((row) => [row[0]!, row]))('%s', (name, [, readBy, fallbackText, minimumText]) => {
    const minimum = Number(/^\d+/.exec(minimumText!)![0]);
    const apps = readBy === 'both' ? (['scheduler', 'worker'] as const) : [readBy as 'scheduler' | 'worker'];
    for (const app of apps) {
      const read = readers[app] as unknown as (env: Env) => Record<string, unknown>;
      const fallback = documented(fallbackText!, app);
      // the value that changes when the variable is set to a taken value other than the default
      const taken = minimum === fallback ? minimum + 1 : minimum;
      const unset = read({});
      const set = read({ [name]: String(taken) });
      const changed = Object.keys(set).filter(
        (field) => typeof set[field] === 'number' && set[field] !== unset[field],
      );
      if (name === 'SUNDIAL_LEDGER') expect(ledgerSizeFromEnv(undefined)).toBe(fallback);
      else
        expect({ name, app, changed, was: unset[changed[0]!] }).toEqual({
          name,
          app,
          changed: [changed[0]],
          was: fallback,
        });
      expect({ name, app, minimumTaken: refusal(read, { [name]: String(minimum) }) }).toEqual({
        name,
        app,
        minimumTaken: undefined,
      });
      for (const bad of [String(minimum - 1), 'abc']) {
        const error = refusal(read, { [name]: bad });
        expect({
          name,
          app,
          bad,
          error: error instanceof SundialError,
          reason: error?.reason,
          field: error?.field,
        }).toEqual({
          name,
          app,
          bad,
          error: true,
          reason: 'invalid',
          field: name,
        });
        expect(error!.message).toContain(bad);
        expect(error!.fix).toMatch(/\S/);
      }
    }
  });

  it.each([
    ['PORT', '65536'],
    ['SUNDIAL_PARTITIONS', '1025'],
    ['SUNDIAL_COMMAND_TIMEOUT_MS', '2147483648'],
  ])('%s=%s (past its most) is refused at start, naming the variable', (name, bad) => {
    for (const read of Object.values(readers)) {
      expect(refusal(read, { [name]: bad })).toMatchObject({ reason: 'invalid', field: name });
    }
  });

  it('SUNDIAL_SHUTDOWN_GRACE_MS leaves room for the hand-back within the longest timer', () => {
    // past it, the shutdown deadline (grace + hand-back) fired at once: a SIGTERM exited 1 mid-run
    const most = String(2_147_483_647 - 15_000);
    expect(workerConfigFromEnv({ SUNDIAL_SHUTDOWN_GRACE_MS: most }).shutdownGraceMs).toBe(Number(most));
    expect(
      refusal(workerConfigFromEnv, { SUNDIAL_SHUTDOWN_GRACE_MS: String(Number(most) + 1) }),
    ).toMatchObject({
      reason: 'invalid',
      field: 'SUNDIAL_SHUTDOWN_GRACE_MS',
    });
  });
});
