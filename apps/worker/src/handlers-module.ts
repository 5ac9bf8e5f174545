import { refusals, type TimerHandler } from '@sundial/core';
import { resolve } from 'node:path';

/** Handler name → function: the built-ins, SUNDIAL_HANDLERS_MODULE's, and a test's. */
export type HandlerMap = Record<string, TimerHandler>;

/**
 * Loads SUNDIAL_HANDLERS_MODULE: a compiled module exporting `handlers`, an object of handler name →
 * function, so users and tests plug their handlers into the stock worker without forking it.
 */
export async function loadHandlersModule(path: string): Promise<HandlerMap> {
  const file = resolve(process.cwd(), path);
  const loaded = (await import(file).catch((error: unknown) => {
    throw Object.assign(
      refusals.invalid(
        'SUNDIAL_HANDLERS_MODULE',
        `SUNDIAL_HANDLERS_MODULE "${path}" could not be loaded from ${file}: ${(error as Error).message}`,
        'Point SUNDIAL_HANDLERS_MODULE at a compiled CommonJS module (absolute, or relative to the working directory) that exports `handlers`, and check that it loads with node.',
      ),
      { cause: error },
    );
  })) as { handlers?: unknown };
  const handlers = loaded.handlers;
  if (
    handlers === null ||
    typeof handlers !== 'object' ||
    Object.values(handlers).some((handler) => typeof handler !== 'function')
  ) {
    throw refusals.invalid(
      'SUNDIAL_HANDLERS_MODULE',
      `SUNDIAL_HANDLERS_MODULE "${path}" must export \`handlers\`: { [name]: (payload, ctx) => ... }`,
      'Export `handlers` from that module: an object of handler name → function (payload, ctx).',
    );
  }
  return handlers as HandlerMap;
}
