// The JSON types of payloads and `meta` (docs/spec.md §2): what is stored, and what a caller may give.

/** Any JSON value: what payloads and `meta` may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * What a caller may give where JSON is stored (a spec's `payload` and `meta`): a `JsonValue`, also with
 * object members that hold `undefined` (an optional field: JSON omits it, and so does the stored copy)
 * and read-only arrays and objects (`as const`). What is stored and handed back is a `JsonValue`. An
 * `interface` has no index signature in TypeScript and is not assignable: declare a payload's type with
 * `type`.
 */
export type JsonInput =
  string | number | boolean | null | readonly JsonInput[] | { readonly [key: string]: JsonInput | undefined };
/** An object of `JsonInput`: a spec's `meta`. */
export type JsonInputObject = { readonly [key: string]: JsonInput | undefined };
