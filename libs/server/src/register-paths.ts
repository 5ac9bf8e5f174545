import Module from 'node:module';
import { join } from 'node:path';
import { compilerOptions } from '../../../tsconfig.json';

/** What node:module's types leave out: the resolver every `require` goes through. */
type Resolver = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolver };

/** The compiled tree this file sits in (dist/libs/server/src → dist), where the aliases point. */
const root = join(__dirname, '..', '..', '..');

/**
 * Each alias of tsconfig.json as the text around its `*` and its target: `@sundial/*` → `libs/*\/src`, and
 * exact ones without a `*` (`@sundial/testing/harness` → `libs/testing/src/harness`, listed first).
 */
const aliases = Object.entries(compilerOptions.paths).map(([pattern, [target]]) => {
  const [prefix, suffix] = pattern.split('*');
  return { prefix, suffix, target, exact: !pattern.includes('*') };
});

/**
 * tsc keeps `@sundial/*` imports as written; this maps them, with the aliases of tsconfig.json (the one
 * place the libs are listed), to the compiled libs beside this file (dist/libs/<name>/src), so
 * `node dist/apps/<app>/src/main.js` runs with no loader flag. Import it first in every entry point,
 * by relative path (the aliases are not mapped yet). `nest build` rewrites the aliases to relative paths
 * itself; then this finds nothing left to map.
 *
 * Not tsconfig-paths' `register`: its 20 modules cost each start ~15 ms of CPU, and the match-all
 * `*` → `dist/*` rule it adds had it look for every package any module requires in dist/ first (some
 * 3,000 `existsSync` a start) before Node resolved it as it would have anyway.
 */
const resolve = loader._resolveFilename;
loader._resolveFilename = function (this: unknown, request, ...rest) {
  for (const { prefix, suffix, target, exact } of aliases) {
    let path = target;
    if (exact) {
      if (request !== prefix) continue;
    } else {
      if (request.length <= prefix.length + suffix.length) continue; // the `*` matches one character or more
      if (!request.startsWith(prefix) || !request.endsWith(suffix)) continue;
      path = target.replace('*', request.slice(prefix.length, request.length - suffix.length));
    }
    try {
      return resolve.call(this, join(root, path), ...rest);
    } catch {
      // not built there (a lib that does not exist): resolved as written, as tsconfig-paths fell back
    }
  }
  return resolve.call(this, request, ...rest);
};
