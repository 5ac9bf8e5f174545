// The `handlers` option maps' types (docs/spec.md §5.1): a handler of an `interface` payload compiles.
import type { JsonCompatible } from './json-types';
import type { TimerContext } from './types';

/**
 * A handler of any payload type, as a `handlers` map holds it before `JsonHandlers` checks its payload
 * type: a `TimerHandler` (of `JsonValue`) took only handlers whose payload type had an index signature,
 * so `(p: Remind, ctx) => …` of an `interface Remind` did not compile.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the payload is checked by JsonHandlers
export type AnyTimerHandler = (payload: any, ctx: TimerContext<any>) => unknown;

/** The handler map of an option: its payload types checked where the module's forRoot takes it. */
export type TimerHandlerMap = Readonly<Record<string, AnyTimerHandler>>;

type PayloadOf<H> = H extends (payload: infer P, ...rest: never[]) => unknown ? P : never;

/** Whether handler `H` takes a payload type that is JSON (`JsonCompatible`), or `unknown` / untyped. */
type JsonPayload<H> =
  unknown extends PayloadOf<H> ? true : [PayloadOf<H>] extends [JsonCompatible<PayloadOf<H>>] ? true : false;

/** The names of the handlers in `M` whose payload type is not JSON. */
type NotJsonHandlers<M> = { [K in keyof M]: JsonPayload<M[K]> extends true ? never : K }[keyof M];

/**
 * What options holding the handler map `M` must also be: nothing more when every handler's payload type
 * survives JSON (docs/spec.md §2), as `schedule` checks a payload (`JsonCompatible`); else each other
 * handler is refused by name with the reason (a `Date`, a method, a bigint, … in its payload type).
 */
export type JsonHandlers<M> = [NotJsonHandlers<M>] extends [never]
  ? unknown
  : {
      handlers: {
        [
          K in NotJsonHandlers<M>
        ]: "this handler's payload type is not JSON (a Date, a function, a bigint, a Map…): Sundial stores payloads as JSON";
      };
    };
