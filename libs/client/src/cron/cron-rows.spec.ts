import { createEngine, VirtualClock } from '@sundial/core';
import { cronRowOwner, rowSpec } from './cron-rows';

describe('cronRowOwner: which stored row already says what the decorator says', () => {
  it('counts a row that differs only in its timeout as changed', async () => {
    const engine = createEngine({ clock: new VirtualClock(0), handlers: { digest: () => undefined } });
    const spec = rowSpec(
      { kind: 'cron', name: 'digest', expression: '0 9 * * *', owner: 'Digest.send' },
      { cron: '0 9 * * *', tz: 'UTC' },
      'app',
    );
    const { matches } = cronRowOwner('app');
    // Written as the registrar writes it (ensureOwnedRow): only an owner's write may carry its mark.
    expect(matches(await engine.schedule(spec, { ownedRow: true }), spec)).toBe(true);
    const bounded = await engine.schedule(
      { ...spec, timeout: '15m', ifExists: 'replace' },
      { ownedRow: true },
    );
    expect(matches(bounded, spec)).toBe(false);
    expect(matches(bounded, { ...spec, timeout: 900_000 })).toBe(true);
    await engine.dispose();
  });

  it("counts an interval row whose period changed as changed, and '30s' as 30000 ms", async () => {
    const engine = createEngine({ clock: new VirtualClock(0), handlers: { beat: () => undefined } });
    const spec = rowSpec(
      { kind: 'interval', name: 'beat', every: '30s', owner: 'Heartbeat.beat' },
      { every: '30s' },
      'app',
    );
    expect(spec).toMatchObject({ key: 'interval:beat', every: '30s' });
    const { matches, owns } = cronRowOwner('app');
    const row = await engine.schedule(spec, { ownedRow: true }); // as the registrar writes it
    expect([owns(row), matches(row, spec), matches(row, { ...spec, every: 30_000 })]).toEqual([
      true,
      true,
      true,
    ]);
    expect(matches(row, { ...spec, every: '1m' })).toBe(false);
    await engine.dispose();
  });
});
