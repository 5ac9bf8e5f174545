import { refusals } from '@sundial/core';

/**
 * The options object each decorator was given, by the metadata made of it. The metadata's own fields
 * (`name`, `kind`, `expression`, `every`) overwrite the options' of the same name, so a `@Cron`-style
 * `{ name: 'digest' }` would vanish before the boot checks the options: they read the given object here.
 */
const given = new WeakMap<object, object>();

/** The options `value`'s decorator was given, if a decorator of this package made it. */
export function givenOptions(value: object): object | undefined {
  return given.get(value);
}

/**
 * A method decorator that adds `value` to the list under `key` on the method, so that decorators stacked
 * on one method each count (`@OnTimer('invoices.remind') @OnTimer('invoice.remind')`: a handler renamed
 * while timers of its old name still wait). Nest's `SetMetadata` would keep only the topmost one and
 * drop the others without a word. Decorators apply bottom-up: each is put first, so the list reads in the
 * order of the source.
 */
export function stackedMetadata<T extends object>(
  key: symbol,
  value: T,
  options: object,
  decorator: string,
): MethodDecorator {
  given.set(value, options);
  return (target, member, descriptor) => {
    const method: unknown = descriptor?.value;
    if (typeof method !== 'function') {
      // a getter or a field (plain JS, a cast): reflect-metadata's TypeError named neither
      throw refusals.invalid(
        'handler',
        `${decorator} goes on a method, and ${target.constructor.name}.${String(member)} is not one (a getter or a field).`,
        `Put ${decorator} on a method of a provider or controller: ${decorator} async run(payload, ctx) {}.`,
      );
    }
    if (typeof target === 'function') {
      // a static method: Nest's discovery lists instances, so it was never found — its timers failed
      // unknown-handler and a @DistributedCron's row was never written, without a word
      throw refusals.invalid(
        'handler',
        `${decorator} goes on an instance method, and ${target.name}.${String(member)} is static: Sundial finds the methods of a provider's instance, never a static one.`,
        `Remove static from ${String(member)} (a provider or controller's method runs with its DI), or call the static method from an instance method that carries ${decorator}.`,
      );
    }
    const below = (Reflect.getOwnMetadata(key, method) as T[] | undefined) ?? [];
    Reflect.defineMetadata(key, [value, ...below], method);
    return descriptor;
  };
}

/** What `stackedMetadata` put under `key` on `method`, in source order (none: empty). */
export function readStacked<T>(key: symbol, method: object): readonly T[] {
  return (Reflect.getOwnMetadata(key, method) as T[] | undefined) ?? [];
}
