// `npm test`, `npm start` and `npm run bench` run this first (pre-scripts): on an older Node the
// NestJS 12 packages (ESM-only) cannot be loaded, and the failure would surface as a cryptic
// ERR_REQUIRE_ESM deep in a test run. Plain CommonJS JavaScript so that it runs on any Node.
const { engines } = require('../package.json');

const [, wantMajor, wantMinor = '0'] = /^>=\s*(\d+)(?:\.(\d+))?/.exec(engines.node) ?? [];
const [major, minor] = process.versions.node.split('.').map(Number);
const ok = major > Number(wantMajor) || (major === Number(wantMajor) && minor >= Number(wantMinor));

if (!ok) {
  console.error(
    `Sundial needs Node ${engines.node} (package.json "engines"); this is Node ${process.versions.node} (${process.execPath}).\n` +
      'Fix: install Node 24 LTS (`nvm install` reads .nvmrc), or run `bash .ci/run`, which installs it.',
  );
  process.exit(1);
}
