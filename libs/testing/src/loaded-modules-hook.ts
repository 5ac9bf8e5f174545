import { writeSync } from 'node:fs';

/**
 * Preloaded into an app's process (`node --require dist/libs/testing/src/loaded-modules-hook.js`) by
 * test/deploy/bad-env.test.ts: at exit, what the process loaded, as one line on stderr, `loaded-modules `
 * and then `{ files, builtins }` as JSON: the files in require's cache, and Node's own modules (`http`)
 * from process.moduleLoadList. It tells a start refused before the app loads from one that loaded it all.
 */
process.on('exit', () => {
  const { moduleLoadList } = process as unknown as { moduleLoadList: string[] };
  const builtins = moduleLoadList
    .filter((entry) => entry.startsWith('NativeModule ') && !entry.startsWith('NativeModule internal/'))
    .map((entry) => entry.slice('NativeModule '.length));
  // written at once: the process exits when this returns
  writeSync(2, `loaded-modules ${JSON.stringify({ files: Object.keys(require.cache), builtins })}\n`);
});
