/**
 * Compile-time test of a spec's `payload` and `meta` input type (`JsonInput`), checked by `npm run
 * typecheck` (not a jest suite): every `@ts-expect-error` line must fail to compile, every other line
 * must compile. Before, they were `JsonValue`: an optional field (`string | undefined`, which JSON omits
 * and the runtime accepts) and an `as const` array were refused by the compiler alone.
 */
import type { JsonInputObject, JsonValue, TimerSpec } from './types';

type Order = { id: string; coupon?: string; lines: readonly { sku: string; qty: number }[] };
declare const order: Order;
declare const maybe: string | undefined;

export const optionalField: TimerSpec = { key: 'k', handler: 'h', payload: { id: order.id, coupon: maybe } };
export const aliasedType: TimerSpec = { key: 'k', handler: 'h', payload: order };
export const asConst: TimerSpec = { key: 'k', handler: 'h', payload: ['a', 'b'] as const };
export const meta: JsonInputObject = { team: 'billing', owner: maybe };
export const stored: JsonValue = { id: 'o-1' };
export const fromStored: TimerSpec = { key: 'k', handler: 'h', payload: stored };

// @ts-expect-error a Date does not survive JSON (it comes back a string): give date.getTime() or an ISO string
export const date: TimerSpec = { key: 'k', handler: 'h', payload: { at: new Date() } };
// @ts-expect-error a function is not JSON
export const fn: TimerSpec = { key: 'k', handler: 'h', payload: { run: () => 1 } };
// @ts-expect-error a bigint is not JSON
export const big: TimerSpec = { key: 'k', handler: 'h', payload: 1n };
// @ts-expect-error meta is an object
export const metaArray: TimerSpec = { key: 'k', handler: 'h', meta: ['a'] };
