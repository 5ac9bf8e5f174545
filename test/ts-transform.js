const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * ts-jest, with one transform cache for all the projects. Jest keeps a cache per project (its
 * directory is named by the project's config), so on a cold cache (CI's clean clone) each of the 8
 * projects transpiled the libraries they share again: ~4,000 transforms of ~700 files. Here a file is
 * transpiled once, by whichever project comes first; the others read the output. ts-jest only
 * transpiles here (tsconfig.jest.json: isolatedModules), so its output depends on the file and the
 * tsconfig alone, not on the project: the key holds those, and the versions that make the output.
 */
const CONFIG = ['tsconfig.json', 'tsconfig.jest.json'].map((file) =>
  readFileSync(join(__dirname, '..', file), 'utf8'),
);
const VERSIONS = ['ts-jest', 'typescript'].map((name) => require(`${name}/package.json`).version);
const SELF = readFileSync(__filename, 'utf8');

class SharedCacheTransformer {
  constructor(options) {
    this.options = options;
  }

  getCacheKey(source, path, { instrument = false, supportsStaticESM = false }) {
    const hash = createHash('sha1');
    for (const part of [...CONFIG, ...VERSIONS, SELF, `${instrument}/${supportsStaticESM}`, path, source])
      hash.update(part).update('\0');
    return hash.digest('hex');
  }

  process(source, path, options) {
    if (!options.config.cache) return this.transpile(source, path, options); // --no-cache
    const dir = join(options.config.cacheDirectory, 'ts-transform-shared');
    const file = join(dir, `${this.getCacheKey(source, path, options)}.json`);
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      // not transpiled yet (or being written by another worker: its output is the same)
    }
    const { code, map } = this.transpile(source, path, options);
    mkdirSync(dir, { recursive: true });
    // written whole, then renamed: a worker reading at the same time sees no half-written file
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, JSON.stringify({ code, map }));
    renameSync(partial, file);
    return { code, map };
  }

  transpile(source, path, options) {
    // ts-jest loads typescript (~0.4 s of CPU): only in a worker that has a file to transpile
    this.tsJest ??= new (require('ts-jest').TsJestTransformer)(this.options);
    return this.tsJest.process(source, path, options);
  }
}

module.exports = { createTransformer: (options) => new SharedCacheTransformer(options) };
