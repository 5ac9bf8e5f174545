// Copies the files tsc does not emit (the Lua scripts and their includes; the operator UI's HTML and CSS)
// next to the compiled code: `npm run build` step 3. (`nest build` copies the Lua scripts through
// nest-cli.json's `assets`.)
const { cpSync, readdirSync, rmSync } = require('node:fs');
const { basename, join } = require('node:path');

const root = join(__dirname, '..');
const assets = [
  { from: 'libs/redis/src/store/commands', to: 'dist/libs/redis/src/store/commands', exts: ['.lua'] },
  // The UI's own tsc build (step 2) writes its modules into the same folder: it is not emptied first.
  {
    from: 'apps/scheduler/ui/static',
    to: 'dist/apps/scheduler/ui',
    exts: ['.html', '.css'],
    keepOthers: true,
  },
];

for (const { from, to, exts, keepOthers = false } of assets) {
  // Start from an empty folder so a script removed from the source does not linger in dist.
  if (!keepOthers) rmSync(join(root, to), { recursive: true, force: true });
  const wanted = (path) => exts.some((ext) => path.endsWith(ext));
  // Folders (no dot in their own name) and files with the extension; judged by the name alone, since the
  // checkout's own path may hold dots (a CI clone in /tmp/tmp.XXXX).
  const keep = (path) => !basename(path).includes('.') || wanted(path);
  cpSync(join(root, from), join(root, to), { recursive: true, filter: keep });
  const count = readdirSync(join(root, to), { recursive: true }).filter(wanted).length;
  console.log(`copy-assets: ${count} ${exts.join('/')} file(s) → ${to}`);
}
