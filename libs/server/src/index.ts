// @sundial/server: what both apps share. `register-paths` is not here: an entry point imports it first,
// by relative path, before any `@sundial/*` import can resolve.
export { APP_SERVICE, type AppService, AppServiceHooks } from './app-service';
export { type ClusterConfig, clusterConfigFromEnv, DEFAULT_REDIS_URL } from './cluster-config';
export { type Env, envFlag, envInt, envList, envOptional, envString, MAX_ENV_INT, MAX_PORT } from './env';
export { HealthController } from './health.controller';
export { HealthModule } from './health.module';
export { MetricsController } from './metrics.controller';
export { createNestLogger, LoggingModule, SUNDIAL_LOGGER } from './logging.module';
export { createPino, LOG_LEVELS, type LogLevelName, parseLogLevel, sundialLogger } from './pino-logger';
export { Lifecycle, type Phase } from './lifecycle';
export { serve } from './serve';
export { type AllowedHosts, allowedHostsFromEnv, hostRefusal, parseAllowedHosts } from './allowed-hosts';
export { guardHttpEdge, refuseEarly } from './http-edge';
export { nameServerSpans } from './route-span';
export { policyFor } from './security-headers';
