/**
 * How the differential suite (differential.test.ts) compares two backends' answers to one call: a call's
 * outcome as data, and a normal form of it in which what legitimately differs (ids, instants read from
 * each backend's own clock, the worker that ran a run) does not count.
 */
import { SundialError } from '@sundial/core';

/** A call's outcome as data: its answer, or its refusal's fields. */
export async function outcomeOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { answer: await call() };
  } catch (error) {
    if (!(error instanceof SundialError)) return { thrown: String(error) };
    const { reason, field, message, fix, detail } = error;
    return { refused: { reason, field, message, fix, detail } };
  }
}

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)/g;
/** Fields that name where or by whom a run ran, which differ by backend. */
const OWN_FIELDS = new Set(['workerId', 'worker']);

/**
 * The normal form: ids by first appearance (`#0`, `#1`, … via `ids`), instants as ms from `now`
 * (epoch ms numbers past 2001 and ISO texts inside strings), the backends' own fields dropped.
 */
export function normal(value: unknown, now: number, ids: Map<string, number>, field = ''): unknown {
  if (typeof value === 'number' && value > 1e12 && value < 1e16) return { ms: value - now };
  if (typeof value === 'string') {
    if (field === 'id') return `#${idOrdinal(ids, value)}`;
    // one form on both backends (docs/spec.md §3.6); a due listing's holds its last due
    if (field === 'nextCursor')
      return { cursor: normal(JSON.parse(atob(value.replace(/-/g, '+').replace(/_/g, '/'))), now, ids) };
    const parts = value.split(ISO);
    if (parts.length === 1) return value;
    return { text: parts, ms: [...value.matchAll(ISO)].map((m) => Date.parse(m[0]) - now) };
  }
  if (Array.isArray(value) && field === 'ids') return value.map((id) => idOrdinal(ids, String(id))).sort();
  if (Array.isArray(value)) return value.map((item) => normal(item, now, ids));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!OWN_FIELDS.has(k)) out[k] = normal(v, now, ids, k);
    return out;
  }
  return value;
}

function idOrdinal(ids: Map<string, number>, id: string): number {
  if (!ids.has(id)) ids.set(id, ids.size);
  return ids.get(id)!;
}

/** Where two normal forms differ (instants within `slackMs`), or null. */
export function difference(a: unknown, b: unknown, slackMs: number, path = ''): string | null {
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    if (Array.isArray(a) !== Array.isArray(b)) return `${path}: ${show(a)} vs ${show(b)}`;
    if (Array.isArray(a) && Array.isArray(b) && (a.some(armed) || b.some(armed))) {
      // a ledger's `armed` entries are Redis's own (docs/spec.md §3.9), counted in its limit
      const [x, y] = [a.filter((e) => !armed(e)), b.filter((e) => !armed(e))];
      const n = Math.min(x.length, y.length);
      return difference(x.slice(0, n), y.slice(0, n), slackMs, path);
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length)
      return `${path}: ${a.length} items vs ${b.length}: ${show(a)} vs ${show(b)}`;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const x = (a as Record<string, unknown>)[k];
      const y = (b as Record<string, unknown>)[k];
      const d = difference(x, y, slackMs, `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  if (typeof a === 'number' && typeof b === 'number' && /\.ms(\.\d+)?$/.test(path))
    return Object.is(a, b) || Math.abs(a - b) <= slackMs ? null : `${path}: ${a} vs ${b}`;
  return Object.is(a, b) ? null : `${path}: ${show(a)} vs ${show(b)}`;
}

const armed = (entry: unknown) => (entry as { event?: string } | null)?.event === 'armed';
const show = (value: unknown) => JSON.stringify(value)?.slice(0, 400);
