// Resolves @sundial/* in the compiled tree, as the apps' entry points do.
import '../../../libs/server/src/register-paths';
import { NestFactory } from '@nestjs/core';
import { SundialError } from '@sundial/core';
import type { AddressInfo } from 'node:net';
// the apps' wording of a port in use (import-free: no @sundial/server module is loaded with it)
import { startFailure } from '../../../libs/server/src/start-failure';
import { AppModule } from './app.module';

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule.forRoot(), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000));
  const { port } = app.getHttpServer().address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'reminders listening', port }));
}

main().catch((error: unknown) => {
  console.error(fatalLine(error));
  process.exit(1);
});

/**
 * The one line a failed start prints, with its fix: a port in use (`npm start` already holds 3000), or
 * Sundial's refusal (a REDIS_URL that is unreachable or malformed: reason, field and fix) — not a stack
 * the fix is buried in. Anything else is printed as it is.
 */
function fatalLine(error: unknown): unknown {
  const { why, fix } = startFailure(error, 'set PORT, e.g. PORT=3002 beside npm start');
  if (why) return JSON.stringify({ msg: `reminders could not start: ${why}`, fix });
  if (!(error instanceof SundialError)) return error;
  const { reason, field } = error;
  return JSON.stringify({
    msg: `reminders could not start: ${error.message}`,
    reason,
    field,
    fix: error.fix,
  });
}
