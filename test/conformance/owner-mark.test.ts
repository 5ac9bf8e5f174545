/**
 * docs/spec.md §2 `meta` and §5.1 owned rows on every backend: `meta.sundialOwner` marks the rows the
 * schedules file and @DistributedCron own, so a write that is not theirs may not set it — else a timer
 * created through the API would be taken for a row of the file and removed as an orphan.
 */
import { ensureOwnedRow, listOwnedRows, type RowOwner, type TimerSpec } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const FILE_OWNER: RowOwner = {
  owns: (timer) => timer.meta?.sundialOwner === 'schedules-file',
  matches: () => false,
};

describe.each(BACKENDS)('%s backend: the owner mark', (name) => {
  const backend = useBackend(name);
  const spoofed: TimerSpec = {
    key: 'api:1',
    handler: 'work',
    delay: '1h',
    meta: { sundialOwner: 'schedules-file' },
  };

  it('schedule, scheduleMany and preview refuse meta.sundialOwner; nothing is written', async () => {
    const h = await backend.open();
    const refusal = { reason: 'invalid', field: 'meta.sundialOwner', fix: expect.stringContaining('Rename') };
    await expect(h.timers.schedule(spoofed)).rejects.toMatchObject(refusal);
    // A batch names the spec it refused (docs/spec.md §3.1).
    await expect(h.timers.scheduleMany([spoofed])).rejects.toMatchObject({
      ...refusal,
      field: 'specs[0].meta.sundialOwner',
    });
    await expect(h.timers.preview(spoofed)).rejects.toMatchObject(refusal);
    // Any value, even null: the key itself is the owner's.
    await expect(
      h.timers.schedule({ ...spoofed, meta: { sundialOwner: null, team: 'a' } }),
    ).rejects.toMatchObject(refusal);
    expect(await h.timers.get('api:1')).toBeNull();
    expect((await listOwnedRows(h.timers, FILE_OWNER)).size).toBe(0);
  });

  it('an owner’s write (ensureOwnedRow) still sets it; other meta keys stay free', async () => {
    const h = await backend.open();
    expect(await ensureOwnedRow(h.timers, spoofed, FILE_OWNER)).toBe('written');
    expect(await h.timers.get('api:1')).toMatchObject({ meta: { sundialOwner: 'schedules-file' } });
    expect(await ensureOwnedRow(h.timers, { ...spoofed, delay: '2h' }, FILE_OWNER)).toBe('written');
    expect(await h.timers.get('api:1')).toMatchObject({ delayMs: 7_200_000 });
    const free = await h.timers.schedule({ key: 'b', handler: 'work', delay: '1h', meta: { owner: 'x' } });
    expect(free.meta).toEqual({ owner: 'x' });
  });
});
