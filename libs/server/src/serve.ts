import type { INestApplication } from '@nestjs/common';
import type { SundialLogger } from '@sundial/core';
import {
  isAwayNotRefused,
  reportDataLoss,
  reportWritesLost,
  SundialMetrics,
  waitForRedis,
  watchPartitionCount,
} from '@sundial/redis';
import { flushCompileCache } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { ClusterConfig } from './cluster-config';
import { exitOnSignal } from './exit-on-signal';
import { setHttpTimeouts } from './http-timeouts';
import { RedisPing } from './redis-ping';
import { SUNDIAL_LOGGER } from './logging.module';
import { exitStartFailed } from './start-fatal';

/**
 * The body of both entry points: build the app, exit 0 on SIGTERM/SIGINT after a clean close, wait for
 * Redis (up to 30 s: @sundial/redis wait-for-redis.ts), listen, and log the bound port (PORT=0 picks a free one, as
 * tests do). A failed start exits 1, its fatal line saying what to do where it can (a port in use); a start a
 * SIGTERM/SIGINT cut short is no failure: the shutdown closed what it waited on, and ends the process itself
 * (its lines, exit 0). A process whose
 * partition count a repartition replaced shuts down the same way (docs/operations.md "Changing the
 * partition count"). One that finds Redis lost its data says so, counts it, and goes on.
 */
export function serve(
  name: string,
  build: () => Promise<{
    app: INestApplication;
    config: ClusterConfig & { port: number };
    shutdownDeadlineMs: number;
  }>,
): void {
  let stopping = (): boolean => false;
  build()
    .then(async ({ app, config, shutdownDeadlineMs }) => {
      const logger = app.get<SundialLogger>(SUNDIAL_LOGGER);
      const exit = exitOnSignal(app, logger, shutdownDeadlineMs);
      const { shutdown } = exit;
      stopping = exit.stopping;
      // Before listen, which starts the app's service: a Redis away for a moment is waited for.
      // A probe failing for want of Redis (RedisPing fails fast without queueing: its stream is shut, no
      // answer, a full Redis) waits; Redis refusing us (WRONGPASS, NOPERM: a reply that is not a
      // transient one) fails the start at once, saying so.
      await waitForRedis(app.get(RedisPing), logger, { isOutage: isAwayNotRefused });
      const { prefix, partitions } = config;
      const metrics = new SundialMetrics(); // its sundial_redis_data_lost_total is exported at 0 from now
      // A repartition replaced our count: shut down as on SIGTERM, to be started again with the new one
      // (its lines say `reason: 'repartition'`, not a signal). Its first look is done before the app
      // listens, so that a ready app tells a loss of the data it started on (layout-watch.ts).
      await watchPartitionCount({
        connection: config.redisUrl,
        prefix,
        partitions,
        intervalMs: config.layoutWatchMs, // SUNDIAL_LAYOUT_WATCH_MS
        onReplaced: ({ message, fix }) => {
          logger.error(`${name} stops: ${message}`, { fix });
          shutdown({ reason: 'repartition' });
        },
        // Redis lost the timers (docs/operations.md "SundialRedisDataLost"): said, counted; the process goes on.
        onDataLost: reportDataLoss(logger, metrics),
        // A failover lost writes (docs/operations.md "SundialRedisWritesLost"): said, counted.
        onWritesLost: reportWritesLost(logger, metrics),
      });
      // Before listen: Node applies them to a connection as it comes (SUNDIAL_HTTP_KEEPALIVE_MS).
      const http = setHttpTimeouts(app.getHttpServer(), config.httpKeepAliveMs, exit.stopping);
      // Every interface unless told (a container's port is reached through its pod or service address).
      await (config.listenHost === undefined
        ? app.listen(config.port)
        : app.listen(config.port, config.listenHost));
      if (stopping()) return; // a signal came during the start: the shutdown goes on, nothing more starts
      const { port, address } = app.getHttpServer().address() as AddressInfo;
      const { serve } = config;
      logger.info(`${name} listening`, {
        port,
        address,
        prefix,
        partitions,
        ...(serve && { serve: serve.join(',') }),
        ...http,
      });
      // With Node's compile cache on (NODE_COMPILE_CACHE: the test runs set it, jest.config.js), what the
      // start compiled is written now, not only at a clean exit, which a SIGKILLed pod never has; the
      // next start reads it. Without it: nothing.
      flushCompileCache();
    })
    .catch((error: unknown) => {
      // A signal during the start: the shutdown closed the connections the start was using (`Connection is
      // closed.`, `Closed while starting`); it logs its own lines and exits 0 — or 1 past its deadline.
      if (stopping()) return;
      exitStartFailed(name, error);
    });
}
