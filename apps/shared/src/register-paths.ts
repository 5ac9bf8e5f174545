import { join } from 'node:path';
import { register } from 'tsconfig-paths';

/**
 * tsc keeps `@sundial/*` imports as written; this maps them to the compiled libs next to this file
 * (dist/libs/<name>/src), so `node dist/apps/<app>/src/main.js` runs with no loader flag.
 * Import it first in every entry point.
 */
const paths: Record<string, string[]> = {};
for (const lib of ['core', 'redis', 'client']) {
  paths[`@sundial/${lib}`] = [`libs/${lib}/src`];
  paths[`@sundial/${lib}/*`] = [`libs/${lib}/src/*`];
}
register({ baseUrl: join(__dirname, '..', '..', '..'), paths });
