import { type DynamicModule, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { SundialHealthModule, SundialModule, SundialWorkerModule } from '@sundial/client';
import { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { HealthController } from './health.controller';
import { Outbox, RedisOutbox } from './outbox';
import { RemindersModule } from './reminders.module';

/**
 * Defaults of the settings a deployment may change. @nestjs/config prefers `load`ed values over the
 * environment, so the environment is merged in here. REDIS_URL has no default: the app refuses to start
 * without one rather than write to whatever Redis answers on localhost.
 */
function settings(env: NodeJS.ProcessEnv): Record<string, string> {
  return {
    DIGEST_CRON: env.DIGEST_CRON || '0 8 * * *',
    HEARTBEAT_EVERY: env.HEARTBEAT_EVERY || '5m',
  };
}

/**
 * The outbox's own connection. Its `error` listener keeps ioredis from printing an
 * `[ioredis] Unhandled error event` stack at each reconnect while Redis is away (at boot with a wrong
 * REDIS_URL, which buried the start's fatal line, or during an outage); a send that fails still rejects.
 */
function outboxRedis(url: string): Redis {
  return new Redis(url).on('error', () => undefined);
}

class ClosingRedisOutbox extends RedisOutbox implements OnApplicationShutdown {
  constructor(private readonly client: Redis) {
    super(client);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.quit();
  }
}

/**
 * The whole app as deployed: every replica serves HTTP, runs the handlers (SundialWorkerModule) and the
 * dispatcher — no Sundial service beside it. `DIGEST_ENABLED=false` deploys it without the digest,
 * `FOLLOWUPS_ENABLED=true` with the follow-ups (a newer build: followup.service.ts).
 */
@Module({})
export class AppModule {
  static forRoot(env: NodeJS.ProcessEnv = process.env): DynamicModule {
    const prefix = env.SUNDIAL_PREFIX || 'reminders';
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ ignoreEnvFile: true, isGlobal: true, load: [() => settings(env)] }),
        SundialModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            connection: config.getOrThrow<string>('REDIS_URL'),
            prefix,
            appName: 'reminders',
            // how long a start waits for an unreachable Redis before it fails (default 30 s)
            ...(env.SUNDIAL_START_WAIT_MS && { startWaitMs: Number(env.SUNDIAL_START_WAIT_MS) }),
            // how often a replica announces its cron declaration set (default 5 s): a rollback's rows
            // come back once the newer build's last announcement lapses, within 4 periods
            ...(env.SUNDIAL_CRON_REFRESH_MS && { cronRefreshMs: Number(env.SUNDIAL_CRON_REFRESH_MS) }),
          }),
        }),
        SundialWorkerModule.forRoot({
          prefix,
          dispatch: true,
          reconcileMs: 500,
          // how soon a run whose replica died is run again (default 30 s)
          ...(env.SUNDIAL_LEASE_MS && { leaseMs: Number(env.SUNDIAL_LEASE_MS) }),
          // how long running handlers may finish on SIGTERM before they are aborted (default 25 s), as
          // the stock worker reads it: keep it under the pod's terminationGracePeriodSeconds
          ...(env.SUNDIAL_SHUTDOWN_GRACE_MS && {
            shutdownGraceMs: Number(env.SUNDIAL_SHUTDOWN_GRACE_MS),
          }),
        }),
        TerminusModule.forRoot({ logger: false }),
        SundialHealthModule,
        RemindersModule.register({
          outbox: {
            provide: Outbox,
            inject: [ConfigService],
            useFactory: (config: ConfigService) =>
              new ClosingRedisOutbox(outboxRedis(config.getOrThrow<string>('REDIS_URL'))),
          },
          replica: env.REPLICA_NAME || `${hostname()}-${process.pid}`,
          digest: env.DIGEST_ENABLED !== 'false',
          followups: env.FOLLOWUPS_ENABLED === 'true',
        }),
      ],
      controllers: [HealthController],
    };
  }
}
