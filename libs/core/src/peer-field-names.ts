import type { FieldNames } from './unknown-field-fix';

/**
 * What other schedulers (and Sundial's own answers) call a field a timer spec names otherwise. A spec
 * written from habit — BullMQ's `data` and `jobId`, @nestjs/schedule's `timeZone`, Temporal's
 * `cronExpressions`, or `dueAt` copied from a timer Sundial returned — is refused with the field Sundial
 * reads, where the closest spelling would mislead (`in` is two letters from `at`, but means `delay`).
 * `input-checks.ts` asks it only for a name that is not a known field.
 */
export interface PeerFieldName {
  /** The field (or fields) Sundial reads instead; the name is told only where one of them is known. */
  readonly instead: readonly string[];
  /** Whose name it is, for the fix: "BullMQ's", "@nestjs/schedule's", "a timer's answer's"; '' for a common word. */
  readonly whose: string;
  /** How to choose, where it names two fields. */
  readonly choose?: string;
  /** The object field it goes in, where it is one of its fields here (`attempts` → `retry.attempts`). */
  readonly within?: string;
}

const bullmq = "BullMQ's";
const nestSchedule = "@nestjs/schedule's";
const temporal = "Temporal's";
const answer = "a timer's answer's";

// A Map, not an object literal: an input field named `constructor` or `toString` must find nothing.
const PEER_FIELD_NAMES: ReadonlyMap<string, PeerFieldName> = new Map<string, PeerFieldName>([
  ['data', { instead: ['payload'], whose: bullmq }],
  ['jobId', { instead: ['key'], whose: bullmq }],
  ['id', { instead: ['key'], whose: answer }],
  [
    'name',
    { instead: ['key', 'handler'], whose: '', choose: '"key" names the timer, "handler" the code it runs' },
  ],
  [
    'repeat',
    {
      instead: ['every', 'cron'],
      whose: bullmq,
      choose: '"every" for an interval, "cron" with "tz" for a cron',
    },
  ],
  ['pattern', { instead: ['cron'], whose: bullmq }],
  ['limit', { instead: ['maxRuns'], whose: bullmq }],
  ['attempts', { instead: ['retry'], whose: bullmq, within: 'retry' }],
  ['backoff', { instead: ['retry'], whose: bullmq, within: 'retry' }],
  ['startDate', { instead: ['startAt'], whose: bullmq }],
  ['endDate', { instead: ['endAt'], whose: bullmq }],
  ['cronTime', { instead: ['cron'], whose: nestSchedule }],
  ['timeZone', { instead: ['tz'], whose: nestSchedule }],
  ['timezone', { instead: ['tz'], whose: '' }],
  ['cronExpressions', { instead: ['cron'], whose: temporal }],
  ['intervals', { instead: ['every'], whose: temporal }],
  ['dueAt', { instead: ['at'], whose: answer }],
  ['delayMs', { instead: ['delay'], whose: answer }],
  ['everyMs', { instead: ['every'], whose: answer }],
  ['in', { instead: ['delay'], whose: '' }],
  ['after', { instead: ['delay'], whose: '' }],
  ['wait', { instead: ['delay'], whose: '' }],
  ['runAt', { instead: ['at'], whose: '' }],
  ['when', { instead: ['at'], whose: '' }],
  ['interval', { instead: ['every'], whose: '' }],
]);

/**
 * The fix for `unknown` when it is another scheduler's (or a common) name for a field among `known`, else
 * null. Only the fields `known` holds are named: `in` in a backfill range, which has no `delay`, finds none.
 * `names`: how the surface writes a field (unknown-field-fix.ts).
 */
export function peerFieldFix(unknown: string, known: readonly string[], names: FieldNames): string | null {
  const peer = PEER_FIELD_NAMES.get(unknown);
  const fields = peer?.instead.filter((field) => known.includes(field));
  if (!peer || !fields || fields.length === 0) return null;
  const whose = peer.whose ? `${peer.whose} ` : '';
  const { name, noun } = names;
  if (peer.within !== undefined) {
    const { within } = peer;
    return `${whose}${name(unknown)} is "${within}.${unknown}" here: move it into ${name(within)}, e.g. ${names.within(within, unknown)}.`;
  }
  const named = fields.map(name).join(' or ');
  const said = `${whose}${name(unknown)} is ${named} here`;
  if (fields.length === 1) return `${said}: rename the ${noun} ${name(unknown)} to ${named}.`;
  return `${said}: write the one you mean instead (${peer.choose ?? named}).`;
}
