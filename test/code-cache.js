const { hash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const vm = require('node:vm');

/**
 * V8's code cache for the CommonJS modules jest runs in its sandboxes. jest-runtime compiles every module
 * a suite requires (the transpiled sources, ioredis, bullmq, …) with `vm.compileFunction` afresh for
 * each suite, in each worker: parsing and compiling them was ~18 % of a jest worker's CPU over 14
 * test/redis suites. Node's compile cache (NODE_COMPILE_CACHE) does not reach `vm`. Here the first
 * compile of a source stores the cache V8 produces, in one directory shared by the workers (as
 * test/ts-transform.js shares the transforms), and later compiles of the same source hand it back. V8
 * checks the data against the source, its version and flags, and compiles as before when it does not
 * fit (`cachedDataRejected`): then the entry is written anew. What runs is the same function either way.
 */
const KEY_PARTS = [process.version, process.arch, JSON.stringify(process.execArgv)];
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
