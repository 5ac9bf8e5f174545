import { createEngine, VirtualClock } from '@sundial/core';
import { cronRowOwner, cronSpec } from './cron-rows';

describe('cronRowOwner: which stored row already says what the decorator says', () => {
  it('counts a row that differs only in its timeout as changed', async () => {
    const engine = createEngine({ clock: new VirtualClock(0), handlers: { digest: () => undefined } });
    const spec = cronSpec(
      { name: 'digest', expression: '0 9 * * *', owner: 'Digest.send' },
      '0 9 * * *',
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
});
