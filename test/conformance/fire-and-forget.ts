import type { Backend, Harness } from './backends';

/** An awaitTask: false interval `f` whose first (2 s) run has started: the runs a change must abort. */
export async function startFireAndForget(backend: Backend): Promise<Harness> {
  const h = await backend.open();
  await h.timers.schedule({
    key: 'f',
    handler: 'work',
    every: 100,
    awaitTask: false,
    payload: { sleepMs: 2_000 }, // on the backend's clock: virtual for memory; a real short wait on Redis
  });
  await h.started({ key: 'f' });
  return h;
}
