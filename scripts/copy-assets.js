// Copies the files tsc does not emit (the Lua scripts) next to the compiled code: `npm run build` step 2.
const { cpSync, mkdirSync, readdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const assets = [{ from: 'libs/redis/src/commands', to: 'dist/libs/redis/src/commands', ext: '.lua' }];

for (const { from, to, ext } of assets) {
  // Start from an empty folder so a script removed from the source does not linger in dist.
  rmSync(join(root, to), { recursive: true, force: true });
  mkdirSync(join(root, to), { recursive: true });
  const files = readdirSync(join(root, from)).filter((file) => file.endsWith(ext));
  for (const file of files) cpSync(join(root, from, file), join(root, to, file));
  console.log(`copy-assets: ${files.length} ${ext} file(s) → ${to}`);
}
