// Resolves @sundial/* in the compiled tree, as the apps' entry points do.
import '../../../libs/server/src/register-paths';
import { NestFactory } from '@nestjs/core';
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
  // A port in use (`npm start` already holds 3000) is said in a line with its fix, not as a stack.
  const { why, fix } = startFailure(error, 'set PORT, e.g. PORT=3002 beside npm start');
  console.error(why ? JSON.stringify({ msg: `reminders could not start: ${why}`, fix }) : error);
  process.exit(1);
});
