import { join } from 'node:path';
import { register } from 'tsconfig-paths';
import { compilerOptions } from '../../../tsconfig.json';

/**
 * tsc keeps `@sundial/*` imports as written; this maps them, with the aliases of tsconfig.json (the one
 * place the libs are listed), to the compiled libs beside this file (dist/libs/<name>/src), so
 * `node dist/apps/<app>/src/main.js` runs with no loader flag. Import it first in every entry point,
 * by relative path (the aliases are not mapped yet). `nest build` rewrites the aliases to relative paths
 * itself; then this finds nothing left to map.
 */
register({ baseUrl: join(__dirname, '..', '..', '..'), paths: compilerOptions.paths });
