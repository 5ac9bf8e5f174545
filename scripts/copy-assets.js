// Copies the files tsc does not emit (the Lua scripts and their includes) next to the compiled code:
// `npm run build` step 2. (`nest build` copies the same files through nest-cli.json's `assets`.)
const { cpSync, readdirSync, rmSync } = require('node:fs');
const { basename, join } = require('node:path');

const root = join(__dirname, '..');
const assets = [
  { from: 'libs/redis/src/store/commands', to: 'dist/libs/redis/src/store/commands', ext: '.lua' },
];

for (const { from, to, ext } of assets) {
  // Start from an empty folder so a script removed from the source does not linger in dist.
  rmSync(join(root, to), { recursive: true, force: true });
  // Folders (no dot in their own name) and files with the extension; judged by the name alone, since the
  // checkout's own path may hold dots (a CI clone in /tmp/tmp.XXXX).
  const keep = (path) => !basename(path).includes('.') || path.endsWith(ext);
  cpSync(join(root, from), join(root, to), { recursive: true, filter: keep });
  const count = readdirSync(join(root, to), { recursive: true }).filter((file) => file.endsWith(ext)).length;
  console.log(`copy-assets: ${count} ${ext} file(s) → ${to}`);
}
