/**
 * docs/spec.md §3.1 on every backend: a scheduleMany batch's answers are its timers as the batch left them.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: scheduleMany answers', (name) => {
  const backend = useBackend(name);

  // docs/spec.md §3.1: each answer is its timer as the batch left it. A key named again with 'replace'
  // answered the first spec's timer as pending, though the second had already replaced it.
  it('answers a timer a later spec of the batch replaced as replaced: cancelled, its version past', async () => {
    const h = await backend.open();
    const kept = await h.timers.schedule({ key: 'k', handler: 'work', delay: '1h' });
    const answers = await h.timers.scheduleMany([
      { key: 'a', handler: 'work', delay: '1h' },
      { key: 'k', handler: 'work', delay: '2h', ifExists: 'keep' },
      { key: 'a', handler: 'work', delay: '2h', ifExists: 'replace' },
      { key: 'k', handler: 'work', delay: '3h', ifExists: 'replace' },
      { key: 'a', handler: 'work', delay: '3h', ifExists: 'keep' },
    ]);
    const [a1, k1, a2, k2, a3] = answers;
    expect(a1).toMatchObject({ key: 'a', status: 'cancelled', version: 2 });
    expect(k1).toMatchObject({ key: 'k', id: kept.id, status: 'cancelled', version: kept.version + 1 });
    expect([a2, k2, a3].map((t) => t.status)).toEqual(['pending', 'pending', 'pending']);
    expect(a3).toEqual(a2);
    // the answers agree with what the backend holds and with the ledger's replaced entries
    expect((await h.timers.snapshot()).sort()).toEqual([a2.id, k2.id].sort());
    expect(await h.timers.get('a')).toEqual(a2);
    const replaced = h.eventsOf('cancelled').map((e) => [e.id, e.version, e.reason]);
    expect(replaced).toEqual(
      expect.arrayContaining([
        [a1.id, a1.version, 'replaced'],
        [k1.id, k1.version, 'replaced'],
      ]),
    );
  });
});
