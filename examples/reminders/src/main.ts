// Resolves @sundial/* in the compiled tree, as the apps' entry points do.
import '../../../libs/server/src/register-paths';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module';

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule.forRoot(), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000));
  const { port } = app.getHttpServer().address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'reminders listening', port }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
