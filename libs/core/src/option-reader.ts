import { MAX_TIMEOUT_MS } from './clock';
import type { SundialError } from './errors';
import { oneOf, rejectUnknownFields } from './input-checks';
import { refusals } from './refusals';
import { showValue } from './show-value';

/**
 * The options object of one module call, read field by field before anything is made of it: a wrong one
 * is the `invalid` refusal naming the field, the call (`where`) and what to write instead, at boot.
 */
export class OptionReader {
  private constructor(
    private readonly where: string,
    readonly given: Readonly<Record<string, unknown>>,
  ) {}

  /** `value` as the options of `where`, refused when it is not an object (`example`: what to pass). */
  static of(where: string, value: unknown, example: string): OptionReader {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw refusals.invalid(
        undefined,
        `${where} options must be an object, got ${showValue(value)}.`,
        `Pass ${example}.`,
      );
    }
    return new OptionReader(where, value as Record<string, unknown>);
  }

  /** A field not in `known` (a typo such as `conection`) is refused, not ignored. */
  only(known: readonly string[]): void {
    rejectUnknownFields(this.given, known, `${this.where} options`);
  }

  /** The refusal of `field`'s value (`field` may be a path, `limits.minEveryMs`, of `value`). */
  refuse(field: string, problem: string, fix: string, value: unknown = this.given[field]): SundialError {
    return refusals.invalid(field, `${this.where}: ${field} ${showValue(value)} ${problem}.`, fix);
  }

  /** An integer of `min` or more (a safe one); `example` goes into the fix. */
  integer(field: string, min: number, example: string, value: unknown = this.given[field]): void {
    if (value === undefined || (Number.isSafeInteger(value) && (value as number) >= min)) return;
    throw this.refuse(
      field,
      `is not an integer of ${min} or more`,
      `Write ${field} as an integer of ${min} or more, e.g. ${example}, or leave it out for the default.`,
      value,
    );
  }

  /**
   * A duration of `min` ms or more that becomes a Node timer (`setTimeout`/`setInterval`, its own or
   * BullMQ's): at most MAX_TIMEOUT_MS (2^31−1, Node's longest timer), past which the timer fires after
   * 1 ms and does the opposite of what was asked (a lease renewed every ms, a poll in a busy loop).
   */
  timerMs(field: string, min: number, example: string, value: unknown = this.given[field]): void {
    const ms = value as number;
    if (value === undefined || (Number.isSafeInteger(ms) && ms >= min && ms <= MAX_TIMEOUT_MS)) return;
    throw this.refuse(
      field,
      `is not an integer of ms from ${min} to ${MAX_TIMEOUT_MS}`,
      `Write ${field} as an integer from ${min} to ${MAX_TIMEOUT_MS} (Node's longest timer), e.g. ${example}, or leave it out for the default.`,
      value,
    );
  }

  /** A non-empty string without the characters of `forbidden` (each named in the fix). */
  text(field: string, example: string, forbidden = ''): void {
    const value = this.given[field];
    if (value === undefined) return;
    if (typeof value === 'string' && value !== '' && ![...forbidden].some((c) => value.includes(c))) return;
    const without = forbidden ? ` without ${[...forbidden].map((c) => `"${c}"`).join(' or ')}` : '';
    throw this.refuse(
      field,
      `is not a non-empty string${without}`,
      `Write ${field} as a non-empty string${without}, e.g. "${example}", or leave it out for the default.`,
    );
  }

  boolean(field: string): void {
    const value = this.given[field];
    if (value === undefined || typeof value === 'boolean') return;
    throw this.refuse(field, 'is not a boolean', `Write ${field} as true or false, or leave it out.`);
  }

  /** One of `allowed` (the first is the default). */
  choice<T extends string>(field: string, allowed: readonly T[]): T {
    return oneOf(this.given[field], field, allowed);
  }

  /** An object whose `methods` are functions: a logger, a clock, a prom-client Registry. */
  methods(field: string, methods: readonly string[], what: string): void {
    const value = this.given[field];
    if (value === undefined) return;
    const missing =
      typeof value === 'object' && value !== null
        ? methods.find((name) => typeof (value as Record<string, unknown>)[name] !== 'function')
        : methods[0];
    if (missing === undefined) return;
    throw this.refuse(
      field,
      `has no ${missing}() method`,
      `Pass ${what} as ${field} (an object with ${methods.map((name) => `${name}()`).join(', ')}), or leave it out.`,
    );
  }

  /**
   * `limits` (docs/spec.md §5.4): `{ maxPayloadBytes?, minEveryMs? }`, each an integer of 1 or more; `also`
   * names other fields the caller takes (RedisTimers' `setBy`).
   */
  limits(also: readonly string[] = []): void {
    const { limits } = this.given;
    if (limits === undefined) return;
    const fix =
      'Write limits as { maxPayloadBytes?: integer ≥ 1, minEveryMs?: integer ≥ 1 }, or leave it out.';
    if (typeof limits !== 'object' || limits === null || Array.isArray(limits))
      throw this.refuse('limits', 'is not an object', fix);
    const given = limits as Record<string, unknown>;
    const known = ['maxPayloadBytes', 'minEveryMs', ...also];
    const unknown = Object.keys(given).find((name) => !known.includes(name));
    if (unknown !== undefined) throw this.refuse(`limits.${unknown}`, 'is not a limit', fix, given[unknown]);
    this.integer('limits.maxPayloadBytes', 1, '65536', given.maxPayloadBytes);
    this.integer('limits.minEveryMs', 1, '100', given.minEveryMs);
  }

  /** Handlers by name: a plain object of functions. */
  handlers(field: string): void {
    const value = this.given[field];
    if (value === undefined) return;
    const fix = `Write ${field} as an object of functions, e.g. { 'invoice.remind': async (payload, ctx) => {} }.`;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw this.refuse(field, 'is not an object of functions', fix);
    for (const [name, handler] of Object.entries(value)) {
      if (typeof handler !== 'function')
        throw this.refuse(`${field}.${name}`, 'is not a function', fix, handler);
    }
  }
}
