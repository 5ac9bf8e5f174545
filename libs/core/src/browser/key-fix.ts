// libs/core/src/browser: modules with no imports, which the operator UI's own build also compiles and
// the browser loads beside the UI's modules (apps/scheduler/ui/tsconfig.json `rootDirs`): the fix of a
// key with no live timer is written here once, and each surface (the TimersApi's call, the HTTP API, the
// CLI, the operator UI) names its own ways in it.

/** A key's scope: the key up to and with its last `:` or `/` (`inv:42:remind` → `inv:42:`), or ''. */
export function keyScope(key: string): string {
  return key.slice(0, Math.max(key.lastIndexOf(':'), key.lastIndexOf('/')) + 1);
}

/** How one surface names, in its own medium, what a not-found key's fix points to. */
export interface KeyFixWays {
  /** what lists the timers under `scope` ('' for every timer): `sundial list --prefix inv:` */
  list(scope: string): string;
  /** what reads the key's history (its ledger): `sundial history inv:42`; no key: the surface's placeholder */
  history(key: string | undefined): string;
  /** the option that keeps an ended timer listed: `--remove-on-complete false` */
  kept: string;
  /** how an ended, kept timer is scheduled again there, when the surface has its own way (the UI's buttons, `sundial again`) */
  again?: string;
  /** else what schedules a timer there (`schedule(spec)`, `POST /v1/timers`), named in an ended timer's fix */
  create?: string;
}

/** The status a write met on a kept timer that ended (`detail.status` of its `not-found`, docs/spec.md §2). */
export type EndedStatus = 'completed' | 'failed';

export const isEndedStatus = (status: unknown): status is EndedStatus =>
  status === 'completed' || status === 'failed';

/**
 * The fix of a write (pause, resume, trigger, reschedule, backfill) refused on a kept timer that ended:
 * it has no live timer to act on, its row stays until a new schedule under the key replaces it.
 */
export function keyEndedFix(key: string | undefined, ways: KeyFixWays): string {
  const how = ways.again ?? ways.create;
  return (
    `Schedule it again to run it${how ? `: ${how}` : ''}. A new timer under the key replaces the row it ` +
    `ended with; ${ways.history(key)} shows its runs.`
  );
}

/** `detail.code` of a `history` refused for a key with no timer and no ledger either. */
export const NO_HISTORY = 'no-history' as const;

/**
 * The fix of a key with no live timer (`not-found` on `key`, docs/spec.md §2): where its neighbours are
 * listed, that one listed as ended is scheduled again to run, and that one removed when it ended (a
 * one-shot after its run, by default) still has its history for the 7 days its ledger is kept
 * (includes/ledger.lua LEDGER_KEEP_MS) — what a newcomer looks for once a run is over. A refused
 * `history` (`code` NO_HISTORY) has looked there already: its fix names the list only. A write refused on
 * a kept timer that ended (`status` completed or failed) has met that timer: its fix is keyEndedFix.
 */
export function keyNotFoundFix(
  key: string | undefined,
  ways: KeyFixWays,
  code?: unknown,
  status?: unknown,
): string {
  if (isEndedStatus(status)) return keyEndedFix(key, ways);
  const list = `Check the key; ${ways.list(key === undefined ? '' : keyScope(key))} lists the timers under it.`;
  if (code === NO_HISTORY) return list;
  return (
    `${list} ` +
    `One listed as completed or failed has ended (kept by ${ways.kept}): ${ways.again ? `${ways.again}, or ` : ''}schedule it again to run it. ` +
    `One removed when it ended (a one-shot after its run, by default) keeps its history for 7 days: ${ways.history(key)}.`
  );
}
