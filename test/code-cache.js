const { hash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const vm = require('node:vm');

/**
 * V8's code cache for the modules jest runs in its sandboxes. jest-runtime compiles every module
 * a suite requires (the transpiled sources, ioredis, bullmq, …) with `vm.compileFunction` afresh for
 * each suite, in each worker: parsing and compiling them was ~18 % of a jest worker's CPU over 14
 * test/redis suites. Node's compile cache (NODE_COMPILE_CACHE) does not reach `vm`. Here the first
 * compile of a source stores the cache V8 produces, in one directory shared by the workers (as
 * test/ts-transform.js shares the transforms), and later compiles of the same source hand it back.
 * Entries are named by the source's hash (V8 itself checks only its length), Node's version and flags;
 * V8 refuses data of another version or flags, and the source is then compiled as before and the entry
 * written anew. What runs is the same code either way. 6 test/api suites in band (CPU profiles):
 * compiling 3.0 → 1.3 s, the cache's own hashing, reads and writes ~0.3 s.
 */
const KEY_PARTS = [
  process.version,
  process.arch,
  JSON.stringify(process.execArgv),
  process.env.NODE_OPTIONS ?? '',
];
const WRAPPED = Symbol.for('sundial.jest-code-cache');
/** per module (file and parameters): its last source and that source's data */
const seen = new Map();

/** Wraps node:vm's compileFunction once per process, caching under `dir`. */
function useCodeCache(dir) {
  if (vm.compileFunction[WRAPPED] || process.env.SUNDIAL_JEST_CODE_CACHE === '0') return;
  const compile = vm.compileFunction;
  mkdirSync(dir, { recursive: true });
  const wrapped = function compileFunction(code, params = [], options = {}) {
    if (options.cachedData !== undefined || options.produceCachedData) return compile(code, params, options);
    // A worker runs several suites: the same module's source again is handed its data from memory,
    // without hashing or reading it (a string compare, where the hash read all of it anyway).
    const signature = `${options.filename}\0${params.join(',')}`;
    const known = seen.get(signature);
    if (known?.code === code) {
      const fn = compile(code, params, { ...options, cachedData: known.data });
      if (!fn.cachedDataRejected) return fn;
    }
    // one-shot hashes (the streaming API took ~1.6× as long): the source, and what else V8's data depends on
    const file = join(dir, `${hash('sha1', code)}-${hash('sha1', [...KEY_PARTS, ...params].join('\0'))}`);
    let cachedData;
    try {
      cachedData = readFileSync(file);
    } catch {
      // not compiled yet (or being written by another worker)
    }
    const fn = compile(code, params, { ...options, cachedData, produceCachedData: !cachedData });
    let data = cachedData && !fn.cachedDataRejected ? cachedData : fn.cachedData;
    if (cachedData && fn.cachedDataRejected) data = store(file, undefined, code, params, options, compile);
    else if (!cachedData && data) store(file, data);
    if (data) seen.set(signature, { code, data });
    return fn;
  };
  wrapped[WRAPPED] = true;
  vm.compileFunction = wrapped;
  if (vm.SourceTextModule) vm.SourceTextModule = cachingModules(vm.SourceTextModule, dir);
}

/**
 * The same for the ES modules jest builds with `new vm.SourceTextModule` (--experimental-vm-modules):
 * NestJS's packages, ~370 modules a suite that loads them. The data is made before the module is
 * linked (its top-level code, what the constructor compiles).
 */
function cachingModules(SourceTextModule, dir) {
  return class CachedSourceTextModule extends SourceTextModule {
    constructor(code, options = {}) {
      if (options.cachedData !== undefined) {
        super(code, options);
        return;
      }
      const signature = `esm\0${options.identifier}`;
      const known = seen.get(signature);
      let cachedData = known?.code === code ? known.data : undefined;
      const file = cachedData
        ? undefined
        : join(dir, `${hash('sha1', code)}-${hash('sha1', [...KEY_PARTS, 'esm'].join('\0'))}`);
      if (file) {
        try {
          cachedData = readFileSync(file);
        } catch {
          // not compiled yet (or being written by another worker)
        }
      }
      let fits = cachedData !== undefined;
      try {
        super(code, { ...options, cachedData });
      } catch (error) {
        // data V8 does not take (Node throws for a module): compiled as before, and written anew
        if (!fits || error?.code !== 'ERR_VM_MODULE_CACHED_DATA_REJECTED') throw error;
        super(code, options);
        fits = false;
      }
      if (fits) {
        seen.set(signature, { code, data: cachedData });
        return;
      }
      const data = this.createCachedData();
      store(
        file ?? join(dir, `${hash('sha1', code)}-${hash('sha1', [...KEY_PARTS, 'esm'].join('\0'))}`),
        data,
      );
      seen.set(signature, { code, data });
    }
  };
}

/**
 * Writes `data` (for a rejected entry: data produced anew, by a compile of its own, once) whole, then
 * renames it: a worker reading at the same time never sees half of it. Returns what it wrote.
 */
function store(file, data, code, params, options, compile) {
  try {
    const bytes = data ?? compile(code, params, { ...options, produceCachedData: true }).cachedData;
    if (!bytes) return undefined;
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, bytes);
    renameSync(partial, file);
    return bytes;
  } catch {
    return undefined; // a cache only: the module ran all the same
  }
}

module.exports = { useCodeCache };
