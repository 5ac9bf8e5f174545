import type { JsonHandlers } from '@sundial/core';

/** The `handlers` map method `K` of an options class returns (sync or async); none: `{}`. */
type ReturnedHandlers<C, K extends PropertyKey> =
  C extends Record<K, (...args: never[]) => infer R>
    ? Awaited<R> extends { handlers?: infer M }
      ? NonNullable<M>
      : object
    : object;

/**
 * What a forRootAsync `useClass` / `useExisting` class must also be: nothing more when the handlers its
 * options method `K` returns take JSON payloads (`JsonHandlers`, as forRoot's and a `useFactory`'s are);
 * else the class does not compile there, naming each other handler. Before, such a class's map was not
 * checked at all: its `(p: { at: Date }) => p.at.getTime()` compiled and failed at its first run.
 */
export type JsonOptionsClass<C, K extends PropertyKey> =
  unknown extends JsonHandlers<ReturnedHandlers<C, K>> ? unknown : JsonHandlers<ReturnedHandlers<C, K>>;
