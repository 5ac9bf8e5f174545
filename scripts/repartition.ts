/**
 * `node dist/scripts/repartition.js --to <count>`: moves the timers under SUNDIAL_PREFIX (default
 * `sundial`) on REDIS_URL to `<count>` partitions while the cluster runs (docs/operations.md "Changing
 * the partition count"). Prints its progress; a refusal prints its reason, message and fix, and exits 1.
 */
// Resolves @sundial/* in the compiled tree (the apps' entry points do the same).
import '../libs/server/src/register-paths';
import { isSundialError } from '@sundial/core';
import { repartition } from '@sundial/redis';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--to');
  const to = at >= 0 ? Number(process.argv[at + 1]) : undefined;
  let lastPhase = '';
  const result = await repartition({
    connection: process.env.REDIS_URL || DEFAULT_REDIS_URL,
    prefix: process.env.SUNDIAL_PREFIX || 'sundial',
    to: to as number,
    onProgress: ({ from, phase, moved, busy }) => {
      if (phase === lastPhase && phase !== 'waiting') return;
      lastPhase = phase;
      console.log(`repartition ${from} → ${to}: ${phase}, ${moved} moved, ${busy} waiting for their run`);
    },
  });
  console.log(
    `repartition ${result.from} → ${result.to} done: ${result.moved} keys moved in ${result.ms} ms. ` +
      `Restart every process with SUNDIAL_PARTITIONS=${result.to}.`,
  );
}

main().catch((error: unknown) => {
  if (isSundialError(error)) {
    const { reason, field, message, fix } = error;
    console.error(JSON.stringify({ reason, field, message, fix }));
  } else {
    console.error(error);
  }
  process.exit(1);
});
