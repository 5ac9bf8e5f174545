import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing/harness';
import * as client from './index';

/**
 * docs/spec.md §5.1 is the contract of `@sundial/client`: every value the package exports (a module, a
 * decorator, a class, a constant) is named there, so an app never depends on something undocumented.
 */
it('every value @sundial/client exports is named in docs/spec.md §5.1', () => {
  const spec = readFileSync(join(ROOT, 'docs/spec.md'), 'utf8');
  const section = spec.slice(spec.indexOf('\n### 5.1 '), spec.indexOf('\n### 5.1a '));
  const unnamed = Object.keys(client).filter((name) => !new RegExp(`\\b${name}\\b`).test(section));
  expect(unnamed).toEqual([]);
});
