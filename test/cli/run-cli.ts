import { DIST } from '@sundial/testing/harness';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';

/** What `npx sundial` runs: package.json's bin, the built file. */
export const BIN = join(DIST, 'apps', 'cli', 'src', 'main.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `sundial` with node as a user would, with `env` over this process's environment. */
export function runCli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

/**
 * runCli, and how long the command went on after its first line on stderr (repartition's, written once
 * its modules are loaded): its wait alone, without node's start, which takes seconds on a loaded host.
 */
export function runCliWaiting(
  args: string[],
  env: Record<string, string>,
): Promise<Run & { waitedMs: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    let firstLineAt: number | undefined;
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      firstLineAt ??= Date.now();
      stderr += text;
    });
    child.on('close', (code) => {
      const waitedMs = Date.now() - (firstLineAt ?? Date.now());
      resolve({ code: code ?? -1, stdout, stderr, waitedMs });
    });
  });
}
