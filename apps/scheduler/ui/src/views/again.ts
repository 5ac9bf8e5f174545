/**
 * "Run again" and "Schedule again" for a timer that ended and was kept (`removeOnComplete: false`, status
 * completed or failed): the not-found fix says such a timer is scheduled again to run, and a support
 * engineer should not need the CLI, nor re-type a whole spec, for it. A one-shot has Run again (due now);
 * an interval or cron has Schedule again (on its schedule from now, every policy of its row, `maxRuns`
 * counted afresh). The page schedules it anew through the same API as any client (`POST /v1/timers`) with
 * what the kept row holds, read by again-spec.ts (libs/core/src/browser), so the API's checks and refusals
 * apply as they are: a timer scheduled under the key meanwhile is `duplicate-key` (Refresh shows it). A row
 * a declarative source owns (`meta.sundialOwner`, which the API refuses) has neither: a note names its
 * owner, which writes it again. A one-shot removed when it ended left no row: its page shows the ledger.
 */
import { api } from '../api.js';
import { now } from '../clock.js';
import {
  type AgainSpec,
  againSpec,
  againWay,
  endAtLeftOutText,
  firstSlotProbe,
  ownerOf,
  ownerWords,
} from '../again-spec.js';
import { h } from '../dom.js';
import { formatTime, schedule } from '../format.js';
import { notify, notifyError } from '../notice.js';
import type { OneAtATime } from '../one-at-a-time.js';
import type { Preview, Timer } from '../types.js';

/** The button of a kept timer that ended (Run again or Schedule again), or none. */
export function againButton(timer: Timer, rerender: () => void, oneAtATime: OneAtATime): HTMLElement | false {
  const way = againWay(timer);
  if (way !== 'run' && way !== 'schedule') return false;
  const run = async (): Promise<void> => {
    let again: AgainSpec;
    try {
      // read when pressed, not when drawn: an endAt passes while the page stays open (the scheduler's now);
      // one the new timer's first slot comes after is left out too (the scheduler's preview says which)
      const at = now();
      const probe = firstSlotProbe(timer, at);
      const first = probe && (await api<Preview>('POST', 'preview', { count: '1' }, probe)).next[0];
      again = againSpec(timer, at, first ? Date.parse(first.at) : undefined);
    } catch (error) {
      notifyError(error, timer.key);
      return;
    }
    const { spec, endAtLeftOut } = again;
    if (!confirm(way === 'run' ? runQuestion(timer) : scheduleQuestion(timer, endAtLeftOut))) return;
    try {
      const created = await api<Timer>('POST', 'timers', {}, spec);
      const due = way === 'run' ? 'due now' : `${schedule(created)}, next due ${formatTime(created.dueAt)}`;
      notify(`${timer.key}: scheduled again, ${due} (id ${created.id}).`);
      rerender();
    } catch (error) {
      notifyError(error, timer.key);
    }
  };
  const label = way === 'run' ? 'Run again' : 'Schedule again';
  return h('button', { type: 'button', onclick: () => void oneAtATime(run) }, label);
}

function runQuestion(timer: Timer): string {
  return `Run “${timer.key}” again now? It is scheduled anew under its key, with its handler, payload and options.`;
}

/** What will be sent: the schedule, and what differs from the row (maxRuns counted afresh, an endAt left out). */
function scheduleQuestion(timer: Timer, endAtLeftOut: AgainSpec['endAtLeftOut']): string {
  const parts = [
    `Schedule “${timer.key}” again, ${schedule(timer)}? It is scheduled anew under its key from now on, with its handler, payload and options.`,
    timer.maxRuns !== undefined &&
      `Its maxRuns (${timer.maxRuns}) counts afresh: up to ${timer.maxRuns} runs from now.`,
    endAtLeftOut !== undefined && capitalized(endAtLeftOutText(endAtLeftOut, formatTime(endAtLeftOut.at))),
  ];
  return parts.filter(Boolean).join(' ');
}

/** An owned row that ended: why it has no Run again or Schedule again, and who writes it again; else none. */
export function ownerNote(timer: Timer): HTMLElement[] {
  const owned = againWay(timer) === 'owned' && ownerOf(timer);
  if (!owned) return [];
  const action = timer.kind === 'once' ? 'Run again' : 'Schedule again';
  const note = h(
    'p',
    {},
    `No ${action} here: this timer belongs to ${ownerWords(owned.owner, owned.app)} (meta.sundialOwner).`,
  );
  return [note];
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
