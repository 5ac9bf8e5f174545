import type { DynamicModule, Provider } from '@nestjs/common';
import { SundialWorkerModule, type SundialWorkerModuleOptions } from '@sundial/client';
import { AppModule } from '../src/app.module';

/**
 * The options AppModule.forRoot(env) gives SundialWorkerModule.forRoot: the value of its given-options
 * provider, in the module where the worker's options are resolved (imported by SundialWorkerModule's).
 */
function workerOptions(env: NodeJS.ProcessEnv): SundialWorkerModuleOptions {
  const modules = (imports: DynamicModule['imports']) =>
    (imports ?? []).filter((imported): imported is DynamicModule => 'module' in (imported as object));
  const worker = modules(AppModule.forRoot(env).imports).find(
    (imported) => imported.module === SundialWorkerModule,
  );
  const options = modules(worker?.imports)
    .flatMap((imported) => imported.providers ?? [])
    .find(
      (provider: Provider) =>
        typeof provider === 'object' &&
        typeof provider.provide === 'symbol' &&
        provider.provide.description === 'sundial:worker-given-options',
    );
  return (options as { useValue: SundialWorkerModuleOptions }).useValue;
}

describe("examples/reminders: the environment's Sundial settings", () => {
  const env = { REDIS_URL: 'redis://127.0.0.1:1' };

  it('SUNDIAL_SHUTDOWN_GRACE_MS is the shutdown grace of its handlers, as in the stock worker', () => {
    // Before: not read, the grace was always the library's 25 s whatever the deployment set.
    expect(workerOptions({ ...env, SUNDIAL_SHUTDOWN_GRACE_MS: '5000' }).shutdownGraceMs).toBe(5000);
    expect(workerOptions(env).shutdownGraceMs).toBeUndefined(); // the library's default, 25 s
  });

  it('SUNDIAL_LEASE_MS is the lease of its runs', () => {
    expect(workerOptions({ ...env, SUNDIAL_LEASE_MS: '3000' }).leaseMs).toBe(3000);
  });
});
