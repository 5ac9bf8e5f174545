import { SetMetadata } from '@nestjs/common';

export const ON_TIMER = Symbol('sundial:on-timer');

/**
 * Marks a provider method as the handler of the timers naming `name` (docs/spec.md §5.1). It runs inside
 * the app with its dependency injection, as `(payload, ctx)`: `ctx.signal`, `ctx.due`, `ctx.key`,
 * `ctx.version`. A name declared twice in one app stops it at boot.
 */
export function OnTimer(name: string): MethodDecorator {
  return SetMetadata(ON_TIMER, name);
}
