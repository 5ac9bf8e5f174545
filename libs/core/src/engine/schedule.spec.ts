/*
 * Engine-only cases (virtual-clock precision, in-process handlers, dispose); the docs/spec.md §3 semantics
 * shared with Redis are in test/conformance.
 */
import { harness, START } from '../../../../test/engine/harness';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('schedule', () => {
  it('copies payloads in and out, so a caller cannot change a stored timer', async () => {
    const { engine } = harness();
    const payload = { list: [1] };
    const timer = await engine.schedule({ key: 'copy', handler: 'work', delay: '1h', payload });
    payload.list.push(2);
    (timer.payload as { list: number[] }).list.push(3);
    expect((await engine.get('copy'))?.payload).toEqual({ list: [1] });
  });

  describe('refusals change nothing', () => {
    it('refuses a handler this engine does not have, suggesting the closest one', async () => {
      const { engine } = harness();
      await expect(engine.schedule({ key: 'k', handler: 'wrok', delay: 1 })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'handler',
        fix: expect.stringContaining('"work"'),
      });
      expect(await engine.snapshot()).toEqual([]);
    });

    it('honours configured limits', async () => {
      const { engine } = harness({ limits: { maxPayloadBytes: 10, minEveryMs: 5_000 } });
      await expect(engine.schedule({ key: 'k', handler: 'work', every: '1s' })).rejects.toMatchObject({
        field: 'every',
      });
      await expect(
        engine.schedule({ key: 'k', handler: 'work', delay: 1, payload: 'x'.repeat(20) }),
      ).rejects.toMatchObject({ reason: 'payload-too-large' });
    });
  });
});

describe('ifExists', () => {
  it("'keep' returns the recorded timer unchanged; a later call cannot move it", async () => {
    const { engine, clock, runs, warnings } = harness();
    const first = await engine.schedule({ key: 'doc-expires', handler: 'work', delay: '14d' });
    await clock.advance('1d');
    const again = await engine.schedule({
      key: 'doc-expires',
      handler: 'work',
      delay: '14d',
      ifExists: 'keep',
    });
    expect(again).toEqual(first);
    expect(warnings).toEqual([]);
    const moved = await engine.schedule({
      key: 'doc-expires',
      handler: 'work',
      delay: '20d',
      ifExists: 'keep',
    });
    expect(moved).toEqual(first);
    expect(warnings).toEqual([
      expect.stringMatching(/requested time is ignored.*delay 1209600000 ms.*delay 1728000000 ms/),
    ]);
    await clock.advance('13d');
    expect(runs).toEqual([expect.objectContaining({ due: START + 14 * DAY })]);
  });

  it("'keep' compares absolute times as instants", async () => {
    const { engine, warnings } = harness();
    await engine.schedule({ key: 'k', handler: 'work', at: '2026-03-05T00:00:00Z' });
    await engine.schedule({
      key: 'k',
      handler: 'work',
      at: Date.parse('2026-03-05T00:00:00Z'),
      ifExists: 'keep',
    });
    expect(warnings).toEqual([]);
    await engine.schedule({ key: 'k', handler: 'work', every: '1h', ifExists: 'keep' });
    expect(warnings).toHaveLength(1);
  });
});
