/** Injection token of the `TimersApi` the HTTP API serves (RedisTimers in production). */
export const TIMERS_API = Symbol('TimersApi');
