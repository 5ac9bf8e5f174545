import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { ROOT } from '@sundial/testing/harness';
import type { ScenarioResult } from './scenario';

const HEADER =
  '| scenario | timers | faults | lost | duplicated (allowed) | early | stale | wrongly recorded | max lateness | s |';

/** The chaos table as Markdown (also what the runner prints). */
export function chaosTable(results: ScenarioResult[]): string {
  const rows = results.map((r) => {
    const ledger = (value: string | number) => (r.ledger ? String(value) : '–');
    return `| ${[
      r.name,
      r.timers,
      r.faults,
      ledger(r.lost),
      ledger(`${r.duplicated} (${r.allowed})`),
      ledger(r.early),
      ledger(r.stale),
      r.wrong,
      ledger(`${(r.maxLatenessMs / 1000).toFixed(1)} s`),
      r.seconds,
    ].join(' | ')} |`;
  });
  return [HEADER, `|${' --- |'.repeat(10)}`, ...rows].join('\n');
}

/** Examples of what each scenario found, to read with the table. */
export function problemList(results: ScenarioResult[]): string {
  const lines = results
    .filter((r) => r.problems.length > 0)
    .flatMap((r) => [
      `- **${r.name}**`,
      ...r.problems.map((problem) => `  - ${problem.replace(/\s+/g, ' ')}`),
    ]);
  return lines.length > 0 ? lines.join('\n') : 'None.';
}

/**
 * Replaces the results section of docs/reliability.md (between its markers) with this run's, formatted as
 * `npx prettier --check .` (part of `npm test`) wants it: the tables' columns padded.
 */
export async function writeReliability(results: ScenarioResult[], document: string): Promise<string> {
  const commit = execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = execSync('git status --porcelain', { cwd: ROOT, encoding: 'utf8' }).trim()
    ? ' (with uncommitted changes)'
    : '';
  const section = [
    START,
    `Run of ${new Date().toISOString().slice(0, 10)} on commit \`${commit}\`${dirty}, ${process.platform}, Node ${process.version}:`,
    '',
    chaosTable(results),
    '',
    'What the ledger found, a few examples per scenario:',
    '',
    problemList(results),
    END,
  ].join('\n');
  const path = join(ROOT, 'docs', 'reliability.md');
  const before = document.indexOf(START);
  const after = document.indexOf(END);
  const updated =
    before >= 0 && after > before
      ? document.slice(0, before) + section + document.slice(after + END.length)
      : `${document.trimEnd()}\n\n${section}\n`;
  writeFileSync(path, await format(updated, { ...(await resolveConfig(path)), filepath: path }));
  return path;
}

const START = '<!-- chaos results: written by npm run chaos -->';
const END = '<!-- end of chaos results -->';
