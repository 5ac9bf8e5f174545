// `npm test` runs its checks with this before jest: `node scripts/run-side-by-side.js lint:eslint
// lint:prettier typecheck` runs those package.json scripts at once rather than one after the other
// (eslint, prettier and tsc each use one core; on CI's 2-core host together they take about the time of
// the longest). Each one's output (stdout and stderr, in the order written) is printed whole when it
// ends, under a line naming it, so outputs never interleave. Exits 1 when any of them failed, after all
// of them ended. Plain CommonJS JavaScript, as scripts/check-node.js.
const { spawn } = require('node:child_process');

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('Usage: node scripts/run-side-by-side.js <package.json script>...');
  process.exit(2);
}

/** `npm run <name>`: resolves to whether it exited 0, once its output is printed. */
function run(name) {
  const startedAt = performance.now();
  const child = spawn('npm', ['run', name], { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks = [];
  child.stdout.on('data', (chunk) => chunks.push(chunk));
  child.stderr.on('data', (chunk) => chunks.push(chunk));
  return new Promise((resolve) => {
    child.once('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)));
    child.once('close', (code, signal) => {
      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      const ok = code === 0;
      const how = ok ? 'ok' : `FAILED (${signal ?? `exit code ${code}`})`;
      process.stdout.write(`\n> npm run ${name}: ${how} in ${seconds} s\n`);
      process.stdout.write(Buffer.concat(chunks));
      resolve(ok);
    });
  });
}

Promise.all(names.map(run)).then((results) => {
  const failed = names.filter((_, n) => !results[n]);
  if (failed.length > 0) {
    console.error(`\n${failed.map((name) => `npm run ${name}`).join(', ')} failed (output above)`);
    process.exit(1);
  }
});
