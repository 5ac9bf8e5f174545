import { AsyncLocalStorage } from 'node:async_hooks';

/** The calls a watched write made under its caller's request id: answered again, or run now. */
interface RequestCalls {
  again: number;
  now: number;
}

const watched = new AsyncLocalStorage<RequestCalls>();

/**
 * A backend's note of one call it made under a caller's `requestId` (docs/design.md "Repeated calls"):
 * `again` when its answer is the first call's, kept and given again (a retry, or a twin sent at once),
 * not when it ran now. Counted for the `watchReplay` around it, if any (nothing otherwise).
 */
export function noteRequestCall(again: boolean): void {
  const calls = watched.getStore();
  if (calls === undefined) return;
  if (again) calls.again++;
  else calls.now++;
}

/**
 * Runs a write made with a `requestId` and says whether its result is its request's first answer given
 * again (`replayed`): some call of it was answered again and none ran now — it changed nothing. The HTTP
 * API's `Idempotent-Replayed` header (docs/spec.md §5.2). A retry whose first try was cut off part way
 * (a batch over several partitions) ran the rest now: not `replayed`.
 */
export async function watchReplay<T>(write: () => Promise<T>): Promise<{ result: T; replayed: boolean }> {
  const calls: RequestCalls = { again: 0, now: 0 };
  const result = await watched.run(calls, write);
  return { result, replayed: calls.again > 0 && calls.now === 0 };
}
