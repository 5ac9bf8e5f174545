/** Injection token of the `TimersBackend` the HTTP API serves (RedisTimers in production). */
export const TIMERS_API = Symbol('TimersApi');
