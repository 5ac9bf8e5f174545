import { DIST } from '@sundial/testing';
import { execFile } from 'node:child_process';
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
