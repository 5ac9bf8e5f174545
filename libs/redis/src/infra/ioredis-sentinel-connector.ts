/* eslint-disable @typescript-eslint/no-require-imports -- the module ioredis itself loads (under jest too) */
import { createHash } from 'node:crypto';

/** ioredis's SentinelConnector prototype, from the module ioredis itself loads, seen as `Internals`. */
export function sentinelConnectorPrototype<Internals>(): Internals {
  return (require('ioredis/built/connectors/SentinelConnector') as { default: { prototype: Internals } })
    .default.prototype;
}

/** sha256 (first 16 hex) of a function's source: whether a patch meets the code it was written against. */
export function fingerprint(code: unknown): string {
  return createHash('sha256').update(String(code)).digest('hex').slice(0, 16);
}
