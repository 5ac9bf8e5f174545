// Copies the files tsc does not emit (the Lua scripts and their includes; the operator UI's HTML, CSS and icon;
// the UI's modules from its tsc build's folder;
// the libraries' package.json) next to the compiled code, and writes the Lua scripts assembled: `npm run
// build` step 3. (`nest build` copies the Lua scripts through nest-cli.json's `assets`; its processes
// assemble them at start.)
const { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const { basename, join, relative } = require('node:path');

const root = join(__dirname, '..');
const assets = [
  { from: 'libs/redis/src/store/commands', to: 'dist/libs/redis/src/store/commands', exts: ['.lua'] },
  // The UI's own tsc build (step 2) writes to dist/ui-build, by source path: its modules and the
  // import-free @sundial/core modules they import as siblings (apps/scheduler/ui/tsconfig.json
  // `rootDirs`) go into one folder, where the browser finds each beside the other; then its HTML and CSS.
  { from: 'dist/ui-build/apps/scheduler/ui/src', to: 'dist/apps/scheduler/ui', exts: ['.js'] },
  {
    from: 'dist/ui-build/libs/core/src/browser',
    to: 'dist/apps/scheduler/ui',
    exts: ['.js'],
    keepOthers: true,
  },
  {
    from: 'apps/scheduler/ui/static',
    to: 'dist/apps/scheduler/ui',
    exts: ['.html', '.css', '.svg'],
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
rmSync(join(root, 'dist/ui-build'), { recursive: true, force: true });

// Every Lua script and function library, assembled once here by the compiled code (from the .lua files
// just copied) instead of at every process's start (~90 ms of CPU each; docs/design.md "Loading"): a
// process started from dist reads them from this file unless the .lua files or the assembling code beside
// it differ from what made it (libs/redis/src/store/script-prebuilt.ts).
const prebuilt = require(join(root, 'dist/libs/redis/src/store/script-prebuilt.js'));
prebuilt.writePrebuilt();
console.log(`copy-assets: the assembled Lua scripts → ${relative(root, prebuilt.PREBUILT_FILE)}`);

// The libraries an application installs from a checkout (README "Add it to your app"): each compiled
// dist/libs/<lib>/src gets its manifest, pointed at the compiled entry and its declarations, so
// `npm install --install-links <checkout>/dist/libs/<lib>/src` copies it in as @sundial/<lib>.
const libs = ['core', 'redis', 'client', 'testing'];
for (const lib of libs) {
  const manifest = JSON.parse(readFileSync(join(root, 'libs', lib, 'package.json'), 'utf8'));
  const out = { ...manifest, main: 'index.js', types: 'index.d.ts' };
  writeFileSync(join(root, 'dist/libs', lib, 'src/package.json'), JSON.stringify(out, null, 2) + '\n');
}
console.log(`copy-assets: ${libs.length} library manifest(s) → dist/libs/<lib>/src/package.json`);

// The last step of `npm run build`: the stamp the test harness reads (libs/testing/src/build.ts
// ensureBuilt) to tell whether dist is older than a source, so a build by hand is not built again by
// the first suite that runs an app.
writeFileSync(join(root, 'dist/.build-stamp'), new Date().toISOString());
