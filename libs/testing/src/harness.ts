// @sundial/testing/harness: this checkout's own test harness (the Redis, HTTP and cluster suites, the
// bench, the chaos and upgrade runs) — private redis-servers, app processes from `dist`, an HTTP client,
// deadlines instead of sleeps. Not the package's user API (that is ./index: SundialTestingModule) and kept
// apart from it so that a suite loading the harness loads neither Nest nor @sundial/client
// (harness.spec.ts): ~0.5 s of CPU in a fresh jest worker (docs/design.md).
export { type AppProcess, killAll, spawnApp, type SpawnAppOptions, spawnRefused } from './app-process';
export { DIST, ensureBuilt, ROOT } from './build';
export { type ChildEnd, childOutput, type ChildOutput } from './child-output';
export { faketimeEnv, hasFaketime } from './faketime';
export {
  type ErrorBody,
  type HttpClient,
  httpClient,
  type HttpReply,
  keyPath,
  type RequestOptions,
} from './http-client';
export { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver';
export { spawnOwned } from './owned-child';
export { clusterEnv, SHORT_LEASE, spawnCluster } from './process-cluster';
export { handlers as recordingHandlers, readRuns, type RunRecord, RUNS_KEY } from './recording-handlers';
export {
  type RedisCluster,
  replicaInStep,
  startClusterNode,
  startClusterReplica,
  startRedisCluster,
} from './redis-cluster';
export { type RedisSentinels, startRedisSentinels } from './redis-sentinel';
export { makeTestCerts, type TestCerts } from './test-certs';
export { freePort, redisNow, type RedisServer, startRedis, type StartRedisOptions } from './redis-server';
export { CommandGate } from './command-gate';
export { connects } from './connects';
export { proxiedSocket } from './proxied-socket';
export { type DropRule, ReplyDropper, type SentCommand } from './reply-dropper';
export { timerSpecFields } from './timer-fields';
export { waitFor } from './wait-for';
export { within } from './within';
export { outageLines, type OutageLines, outageRecovered } from './outage-lines';
export { oddThrownValues } from './odd-thrown-values';
export { installedLibraries, type OutsideApp, outsideApp } from './outside-app';
export { type RawReply, rawHttp } from './raw-http';
