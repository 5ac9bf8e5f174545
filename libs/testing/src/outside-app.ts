import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST, ROOT } from './build';

/** An app outside this checkout, with Sundial's libraries installed as an app installs them. */
export interface OutsideApp {
  /** the app's folder: `src`, `dist` (what tsc wrote), `node_modules/@sundial/<lib>` */
  app: string;
  /** what the user's strict tsc said and its exit status */
  tsc: { status: number | null; output: string };
  /** removes it all */
  remove(): void;
}

/**
 * An app outside the checkout (README "Add it to your app"): the built libraries `libs` copied into its
 * node_modules/@sundial as `npm install --install-links <checkout>/dist/libs/<lib>/src` leaves them, its
 * other packages (@nestjs/*, ioredis…) from this checkout's node_modules one directory up, as an app's own
 * node_modules would hold them; `sources` (file name → code) written to its `src` and compiled with the
 * user's strict tsc (commonjs, `compilerOptions` added).
 */
export function outsideApp(
  libs: string[],
  sources: Record<string, string>,
  compilerOptions: Record<string, unknown> = {},
): OutsideApp {
  const { app, remove } = installedLibraries(libs);
  mkdirSync(join(app, 'src'));
  for (const [name, code] of Object.entries(sources)) writeFileSync(join(app, 'src', name), code);
  const tsconfig = {
    compilerOptions: {
      module: 'commonjs',
      target: 'ES2022',
      moduleResolution: 'node',
      strict: true,
      esModuleInterop: true,
      skipLibCheck: true,
      outDir: 'dist',
      rootDir: 'src',
      types: ['node'],
      ...compilerOptions,
    },
    include: ['src'],
  };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], {
    encoding: 'utf8',
  });
  return {
    app,
    tsc: { status: run.status, output: run.stdout + run.stderr },
    remove,
  };
}

/**
 * The built libraries `libs` copied into `app`/node_modules/@sundial of a new folder outside the checkout,
 * as `npm install --install-links <checkout>/dist/libs/<lib>/src` leaves them; their packages (ioredis…)
 * from this checkout's node_modules one directory up. `remove` deletes the folder.
 */
export function installedLibraries(libs: string[]): { app: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sundial-outside-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const app = join(dir, 'app');
  for (const lib of libs) {
    cpSync(join(DIST, 'libs', lib, 'src'), join(app, 'node_modules', '@sundial', lib), { recursive: true });
  }
  return { app, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
