import type { Command } from './command';

/**
 * A command as `sundial help` lists it, and how to load it. Each command's module (and what it imports:
 * @sundial/redis for repartition) is loaded only when that command runs or its usage is asked for, so
 * `sundial get k` does not pay for the thirteen others at every invocation.
 */
export interface CommandEntry {
  name: string;
  /** one line for `sundial help` */
  summary: string;
  load(): Promise<Command>;
}

/** Every command, in the order `sundial help` lists them. A new command is one file plus one entry here. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'list',
    summary: 'list timers by key (by due with --due-before), a page at a time (--all: every page)',
    load: async () => (await import('./commands/list')).list,
  },
  {
    name: 'get',
    summary: 'show one timer (the payload only with --show-payload)',
    load: async () => (await import('./commands/get')).get,
  },
  {
    name: 'history',
    summary: "a timer's ledger: what happened to it, newest first",
    load: async () => (await import('./commands/history')).history,
  },
  {
    name: 'next',
    summary: "a timer's next due times, as its policies will produce them",
    load: async () => (await import('./commands/next')).next,
  },
  {
    name: 'preview',
    summary: 'validate a timer spec and show its next due times; writes nothing',
    load: async () => (await import('./commands/preview')).preview,
  },
  {
    name: 'schedule',
    summary: 'schedule a timer from flags and/or a JSON file (POST /v1/timers)',
    load: async () => (await import('./commands/schedule')).schedule,
  },
  {
    name: 'cancel',
    summary: 'cancel a live timer, every timer of a scope (--prefix) or every timer (--all)',
    load: async () => (await import('./commands/cancel')).cancel,
  },
  {
    name: 'reschedule',
    summary: 'give a timer a new due time (--delay from now, or --at); a paused one is resumed',
    load: async () => (await import('./commands/reschedule')).reschedule,
  },
  {
    name: 'pause',
    summary: 'pause a pending timer (it keeps its place; resume brings it back)',
    load: async () => (await import('./commands/pause')).pause,
  },
  {
    name: 'resume',
    summary: 'resume a paused timer',
    load: async () => (await import('./commands/resume')).resume,
  },
  {
    name: 'trigger',
    summary: 'run a pending timer now, without moving its schedule',
    load: async () => (await import('./commands/trigger')).trigger,
  },
  {
    name: 'again',
    summary: 'schedule a kept timer that ended (completed or failed) again from its row',
    load: async () => (await import('./commands/again')).again,
  },
  {
    name: 'backfill',
    summary: "run the slots of a periodic timer's range now, in order",
    load: async () => (await import('./commands/backfill')).backfill,
  },
  {
    name: 'repartition',
    summary: 'move the timers to another partition count while the cluster runs (talks to Redis)',
    load: async () => (await import('./commands/repartition')).repartition,
  },
];
