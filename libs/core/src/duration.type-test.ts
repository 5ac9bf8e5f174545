/**
 * Compile-time test of the `Duration` type, checked by `npm run typecheck` (not a jest suite):
 * every `@ts-expect-error` line must fail to compile, every other line must compile.
 */
import type { Duration } from './duration';
import type { TimerSpec } from './types';

export const accepted: Duration[] = ['250ms', '90s', '10m', '1.5h', '14d', '0ms'];

// @ts-expect-error "hr" is not a unit: write "1h"
export const hr: Duration = '1hr';
// @ts-expect-error "sec" is not a unit: write "90s"
export const sec: Duration = '90sec';
// @ts-expect-error "min" is not a unit: write "10m"
export const min: Duration = '10min';
// @ts-expect-error weeks are not a unit: write "14d"
export const weeks: Duration = '2w';
// @ts-expect-error units are lower case
export const upper: Duration = '10M';
// @ts-expect-error a unit is required
export const bare: Duration = '10';
// @ts-expect-error a number is required
export const unitOnly: Duration = 'ms';

export const spec: TimerSpec = { key: 'k', handler: 'h', delay: '3d' };
// @ts-expect-error the typo is caught inside a TimerSpec too
export const badSpec: TimerSpec = { key: 'k', handler: 'h', every: '1hr' };
