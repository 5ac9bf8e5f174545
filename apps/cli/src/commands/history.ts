import type { LedgerEntry } from '@sundial/core';
import { onlyOptions, option, requireKey } from '../args';
import type { Command } from '../command';
import { timerPath } from '../http';
import { table, time } from '../output';

const usage = 'sundial history <key> [--limit <n>] [--json]';

export const history: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['limit'], usage);
    const key = requireKey(args, usage);
    const answer = await api.request<{ key: string; entries: LedgerEntry[] }>(
      'GET',
      timerPath(key, 'history'),
      {
        query: { limit: option(args, 'limit') },
        key,
      },
    );
    out.result(answer, () =>
      answer.entries.length
        ? table(
            ['AT', 'EVENT', 'VERSION', 'WORKER', 'DETAIL'],
            answer.entries.map((e) => [time(e.at), e.event, String(e.version), e.workerId ?? '—', detail(e)]),
          )
        : `no ledger entries for ${key}`,
    );
  },
};

function detail(entry: LedgerEntry): string {
  const parts = [
    entry.reason && `reason=${entry.reason}`,
    // a failed run that ended its timer: why it ended (a completed one says it in its reason)
    entry.ended && `ended=${entry.ended}`,
    entry.count !== undefined && `count=${entry.count}`,
    entry.attempt !== undefined && `attempt=${entry.attempt}`,
    entry.due && `due=${entry.due}`,
    entry.message,
  ];
  return parts.filter(Boolean).join(' ') || '—';
}
