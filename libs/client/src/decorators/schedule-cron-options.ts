import type { OptionReader } from '@sundial/core';

/** Why each option of `@nestjs/schedule`'s `@Cron` has no place here, and what to write instead. */
interface Migration {
  why: string;
  fix: string;
}

const DISTRIBUTED: Migration = {
  why: "Sundial's rows are always distributed: each slot is claimed once in Redis, with a lease (leaseMs), however many replicas run",
  fix: 'Remove distributed, lockKey and lockTtlMs: no locker to configure.',
};

/** `@Cron`'s options (@nestjs/schedule 6) that Sundial's decorators do not take, by name. */
const SCHEDULE_ONLY: Readonly<Record<string, (row: string | undefined) => Migration>> = {
  name: (row) =>
    row === undefined
      ? { why: "the handler's name is @OnTimer's first argument", fix: 'Remove name from the options.' }
      : {
          why: `the name is the decorator's first argument, and the row is ${row}`,
          fix: `Remove name from the options; Timers.get('${row}') stands for SchedulerRegistry.getCronJob(name).`,
        },
  utcOffset: () => ({
    why: 'an expression is read in an IANA time zone',
    fix: "Remove utcOffset and give timeZone: a fixed offset is an Etc zone (timeZone: 'Etc/GMT-1' for utcOffset 60: the Etc signs are inverted), a place's zone ('Europe/Paris') follows its summer time.",
  }),
  distributed: () => DISTRIBUTED,
  lockKey: () => DISTRIBUTED,
  lockTtlMs: () => DISTRIBUTED,
  threshold: () => ({
    why: 'it has no equivalent: slots a row missed (no replica up, Redis away) are handled by its catchup policy',
    fix: "Remove threshold; catchup ('latest' by default, 'skip', 'all') and catchupWindow say what runs of missed slots (docs/spec.md §3.3c).",
  }),
  initialDelay: () => ({
    why: "it has no equivalent: a row's slots do not wait for one replica's boot",
    fix: 'Remove initialDelay; a run that needs what is not ready yet may throw, and retry tries it again.',
  }),
  unrefTimeout: () => ({
    why: 'it has no equivalent: no timer of the process waits for the row, its slots are claimed from Redis',
    fix: 'Remove unrefTimeout.',
  }),
};

/**
 * Refuses an option of `@Cron` given to `@OnTimer`, `@DistributedCron` or `@DistributedInterval` (`read`:
 * the decorator's options; `row`: the key it writes, none for `@OnTimer`) with what it becomes, where
 * the unknown-field check could only say "remove" — or, for a `name`, not see it at all.
 */
export function refuseScheduleOptions(read: OptionReader, row?: string): void {
  for (const field of Object.keys(read.given)) {
    const migration = Object.hasOwn(SCHEDULE_ONLY, field) ? SCHEDULE_ONLY[field](row) : undefined;
    if (migration === undefined) continue;
    throw read.refuse(
      field,
      `is an option of @nestjs/schedule's @Cron that Sundial does not take: ${migration.why}`,
      migration.fix,
    );
  }
}
