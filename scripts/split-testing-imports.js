// Moves imports of the monorepo's test harness from `@sundial/testing` (since the split, only what a user's
// tests need: SundialTestingModule and its options) to `@sundial/testing/harness`. A file importing harness
// names only switches its import; one importing both keeps the user-facing names on `@sundial/testing` and
// gets a second import. Idempotent: run it again after merging a branch that still imports the harness
// from `@sundial/testing`, then `npx prettier --write` the files it names.
//
//   node scripts/split-testing-imports.js [folder…]   (default: apps libs test bench examples scripts)
const { readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
/** What libs/testing/src/index.ts exports; everything else a file imports from it is the harness's. */
const PUBLIC = new Set(['SundialTestingModule', 'SundialTestingModuleOptions']);
const SKIP = new Set(['node_modules', 'dist', 'ui-build']);

function* tsFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** `import [type] { a, type B as C } from '@sundial/testing';` split by which entry each name is from. */
function splitNamed(_match, typeOnly, list) {
  const specifiers = list
    .split(',')
    .map((text) => text.trim())
    .filter(Boolean);
  const name = (spec) => spec.replace(/^type\s+/, '').split(/\s+as\s+/)[0];
  const kept = specifiers.filter((spec) => PUBLIC.has(name(spec)));
  const moved = specifiers.filter((spec) => !PUBLIC.has(name(spec)));
  const statement = (specs, from) => `import ${typeOnly ?? ''}{ ${specs.join(', ')} } from '${from}';`;
  return [
    ...(kept.length > 0 ? [statement(kept, '@sundial/testing')] : []),
    ...(moved.length > 0 ? [statement(moved, '@sundial/testing/harness')] : []),
  ].join('\n');
}

/** `import * as ns from '@sundial/testing'`: the harness's, unless the file uses a public name through it. */
function splitNamespace(source) {
  return source.replace(/import \* as (\w+) from '@sundial\/testing';/g, (match, ns) => {
    const usesPublic = [...PUBLIC].some((name) => source.includes(`${ns}.${name}`));
    return usesPublic ? match : `import * as ${ns} from '@sundial/testing/harness';`;
  });
}

const folders = process.argv.slice(2);
const changed = [];
for (const folder of folders.length > 0
  ? folders
  : ['apps', 'libs', 'test', 'bench', 'examples', 'scripts']) {
  for (const file of tsFiles(join(root, folder))) {
    // the package's own files import each other by relative path
    if (file.startsWith(join(root, 'libs/testing/src'))) continue;
    const before = readFileSync(file, 'utf8');
    const named = /import (type )?\{([^}]*)\}\s*from '@sundial\/testing';/g;
    const after = splitNamespace(before.replace(named, splitNamed));
    if (after === before) continue;
    writeFileSync(file, after);
    changed.push(relative(root, file));
  }
}
console.log(changed.join('\n'));
console.error(`split-testing-imports: ${changed.length} file(s) changed`);
