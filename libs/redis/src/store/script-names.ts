/** Every Lua command, by file name without `.lua`. */
export const SCRIPT_NAMES = [
  'backfill',
  'cancel',
  'cancel-all',
  'claim',
  'complete',
  'detach',
  'migrate-ids',
  'pass-late',
  'pause',
  'reconcile',
  'release',
  'renew-leases',
  'repartition-drop',
  'repartition-put',
  'repartition-take',
  'reschedule',
  'resume',
  'schedule',
  'take-due',
  'trigger',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * The hot scripts — the fire path's and the client's writes —, called as Redis Functions (`FCALL`, Redis
 * 7.0 or later): a library's include functions and tables are made once per load, not on every call as
 * EVALSHA makes them (docs/design.md "Redis script contract", "Loading"). The others (rare: leases,
 * reconciling, repartition, migration) stay scripts (EVALSHA).
 */
export const FUNCTION_SCRIPTS: ReadonlySet<ScriptName> = new Set<ScriptName>([
  'take-due',
  'claim',
  'complete',
  'schedule',
  'cancel',
  'cancel-all',
  'reschedule',
  'pause',
  'resume',
  'trigger',
  'backfill',
]);

/** A script's ioredis command name: `sundial_<file name with - replaced by _>`. */
export function commandName(script: ScriptName): string {
  return `sundial_${script.replace(/-/g, '_')}`;
}
