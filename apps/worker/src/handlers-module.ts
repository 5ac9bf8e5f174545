import type { TimerHandler } from '@sundial/core';
import { resolve } from 'node:path';

/** Handler name → function: the built-ins, SUNDIAL_HANDLERS_MODULE's, and a test's. */
export type HandlerMap = Record<string, TimerHandler>;

/**
 * Loads SUNDIAL_HANDLERS_MODULE: a compiled module exporting `handlers`, an object of handler name →
 * function, so users and tests plug their handlers into the stock worker without forking it.
 */
export async function loadHandlersModule(path: string): Promise<HandlerMap> {
  const loaded = (await import(resolve(process.cwd(), path))) as { handlers?: unknown };
  const handlers = loaded.handlers;
  if (
    handlers === null ||
    typeof handlers !== 'object' ||
    Object.values(handlers).some((handler) => typeof handler !== 'function')
  ) {
    throw new Error(
      `SUNDIAL_HANDLERS_MODULE "${path}" must export \`handlers\`: { [name]: (payload, ctx) => ... }`,
    );
  }
  return handlers as HandlerMap;
}
