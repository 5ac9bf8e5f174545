import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
/**
 * Read elsewhere than the apps' config: SUNDIAL_LEDGER by every Redis class whose `ledger` option is left
 * out (libs/redis infra/partitioned.ts), WORKER_PORT and SUNDIAL_START_REDIS_PORT by `npm start`
 * (scripts/start.ts).
 */
const READ_ELSEWHERE: Record<string, string> = {
  SUNDIAL_LEDGER: 'both',
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
