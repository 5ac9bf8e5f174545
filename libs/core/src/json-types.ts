// The JSON types of payloads and `meta` (docs/spec.md §2): what is stored, and what a caller may give.

/** Any JSON value: what payloads and `meta` may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * What a caller may give where JSON is stored (a spec's `payload` and `meta`): a `JsonValue`, also with
 * object members that hold `undefined` (an optional field: JSON omits it, and so does the stored copy)
 * and read-only arrays and objects (`as const`). What is stored and handed back is a `JsonValue`. A
 * payload of an `interface` type (no index signature) is checked by `JsonCompatible` instead: `schedule`
 * takes it.
 */
export type JsonInput =
  string | number | boolean | null | readonly JsonInput[] | { readonly [key: string]: JsonInput | undefined };
/** An object of `JsonInput`: a spec's `meta`. */
export type JsonInputObject = { readonly [key: string]: JsonInput | undefined };

/** A member of an object: `undefined` too (an optional field; JSON leaves it out, as the stored copy does). */
type JsonCompatibleMember<T> = T extends undefined ? undefined : JsonCompatible<T>;

/**
 * `T` itself when every part of it survives JSON (docs/spec.md §2), else `T` with the parts that do not
 * turned into `never` or a message: what `schedule(spec)` checks a payload of type `P` against
 * (`CheckedSpec<P>`), so that a payload of an `interface` type (which has no index signature, and is not a
 * `JsonInput`) compiles, and a function, a symbol, a bigint, a `Date` or a `Map` (an object with methods:
 * JSON keeps none of them) anywhere in it does not. `undefined` is taken as an object's member only (an
 * array's `undefined` would become `null`). What types cannot say is checked when the call runs: a
 * class instance (only plain objects are JSON), `NaN`, a cycle.
 */
export type JsonCompatible<T> = [T] extends [JsonInput] ? T : JsonChecked<T>;

/** `JsonCompatible` of a type that is no `JsonInput` (an interface, or not JSON), part by part. */
type JsonChecked<T> = T extends string | number | boolean | null
  ? T
  : T extends Date
    ? 'a Date is not JSON: give date.getTime() or date.toISOString()'
    : T extends bigint | symbol | undefined | ((...args: never[]) => unknown)
      ? never
      : T extends readonly unknown[]
        ? { [I in keyof T]: JsonCompatible<T[I]> }
        : T extends object
          ? { [K in keyof T]: K extends symbol ? never : JsonCompatibleMember<T[K]> }
          : never;
