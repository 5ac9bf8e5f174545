/**
 * For a suite that runs its cases on several Redis topologies (one node, a Cluster, Sentinel), each case
 * mostly waiting on an outage: starts the topologies side by side (beforeAll) and stops them after the
 * suite (afterAll). The cases are `it.concurrent`: `inTurn(name, body)` runs the cases of one topology
 * one after another, in the order they started (each takes its servers down, or sets them up), while
 * those of the other topologies run beside them.
 */
export function topologiesSideBySide<T extends { stop(): Promise<void> }>(
  starts: [string, () => Promise<T>][],
): { inTurn<R>(name: string, body: (topology: T) => Promise<R>): Promise<R> } {
  const started = new Map<string, T>();
  /** per topology: its last case's end (failed or not) */
  const turns = new Map<string, Promise<unknown>>();

  beforeAll(async () => {
    const ends = await Promise.allSettled(
      starts.map(async ([name, start]) => void started.set(name, await start())),
    );
    // whatever did start is in `started`, for afterAll to stop
    const failed = ends.find((end): end is PromiseRejectedResult => end.status === 'rejected');
    if (failed) throw failed.reason;
  }, 60_000); // deadline: redis-servers, a Cluster's join, Sentinels knowing each other, on a loaded host
  afterAll(async () => {
    await Promise.all([...started.values()].map((topology) => topology.stop()));
  });

  return {
    inTurn(name, body) {
      const turn = (turns.get(name) ?? Promise.resolve()).then(() => body(started.get(name)!));
      turns.set(
        name,
        turn.catch(() => undefined),
      );
      return turn;
    },
  };
}
