import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import * as publicApi from './index';

const ROOT = resolve(__dirname, '../../..');

/** The source file a module specifier names: `./x` (x.ts or x/index.ts) or an `@sundial/*` alias. */
function sourceOf(specifier: string, from: string): string | undefined {
  let base: string;
  if (specifier.startsWith('.')) base = resolve(dirname(from), specifier);
  else if (specifier === '@sundial/testing/harness') base = join(ROOT, 'libs/testing/src/harness');
  else if (specifier.startsWith('@sundial/')) base = join(ROOT, 'libs', specifier.slice(9), 'src');
  else return undefined;
  return [`${base}.ts`, join(base, 'index.ts')].find((file) => existsSync(file));
}

/**
 * Every package a module reaches through its imports and re-exports, following our own files
 * (relative and `@sundial/*`) and naming the rest (`@nestjs/common`, `ioredis`, `node:fs`…) and the
 * `@sundial/*` libraries passed through.
 */
function packagesReached(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
    for (const { fileName: specifier } of importedFiles) {
      if (specifier.startsWith('@sundial/')) packages.add(specifier);
      const source = sourceOf(specifier, file);
      if (source) queue.push(source);
      else if (!specifier.startsWith('.')) packages.add(specifier);
    }
  }
  return packages;
}

/** What would load Nest in a suite: ~0.5 s of CPU in a fresh jest worker (docs/design.md). */
const heavy = (name: string): boolean => name.startsWith('@nestjs/') || name === '@sundial/client';

describe('@sundial/testing and its harness, two entries', () => {
  it('the harness (@sundial/testing/harness) reaches neither Nest nor @sundial/client', () => {
    const reached = [...packagesReached(join(__dirname, 'harness.ts'))];
    expect(reached.filter(heavy)).toEqual([]);
    // the walk does follow the aliases: the harness uses @sundial/core's timer fields
    expect(reached).toContain('@sundial/core');
  });

  it("the package's index (SundialTestingModule) is the one that loads them", () => {
    const reached = [...packagesReached(join(__dirname, 'index.ts'))];
    expect(reached.filter(heavy)).toEqual(expect.arrayContaining(['@nestjs/common', '@sundial/client']));
  });

  it('@sundial/testing exports SundialTestingModule alone (its options a type), named in docs/spec.md §5.1', () => {
    const spec = readFileSync(join(ROOT, 'docs/spec.md'), 'utf8');
    const section = spec.slice(spec.indexOf('\n### 5.1 '), spec.indexOf('\n### 5.1a '));
    expect(Object.keys(publicApi)).toEqual(['SundialTestingModule']);
    expect(Object.keys(publicApi).filter((name) => !section.includes(name))).toEqual([]);
  });
});
