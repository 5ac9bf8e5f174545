/**
 * docs/spec.md §2 on every backend: `.` and `..` are refused as a new timer's key (`invalid` on the key,
 * the message saying why), by schedule and scheduleMany alike, changing nothing — as a URL path segment
 * they name the route's parent, so no HTTP route, CLI command or UI page could reach such a timer. Keys
 * that only contain dots are taken; lookups still accept `.` and `..` (a timer made before the rule).
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: the keys . and ..', (name) => {
  const backend = useBackend(name);
  const spec = { handler: 'work', delay: '1h' } as const;

  it('refused as a new key, with the reason; other keys with dots are taken; lookups answer', async () => {
    const h = await backend.open();
    for (const key of ['.', '..']) {
      await expect(h.timers.schedule({ ...spec, key })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'key',
        message: `key "${key}" is a URL dot-segment: no HTTP route could name the timer`,
        fix: expect.stringMatching(/invoice:42:remind/),
      });
      await expect(
        h.timers.scheduleMany([
          { ...spec, key: 'ok' },
          { ...spec, key },
        ]),
      ).rejects.toMatchObject({ reason: 'invalid', field: 'specs[1].key' });
      expect(await h.timers.get(key)).toBeNull();
      expect(await h.timers.cancel(key)).toBe(false);
    }
    expect(await h.timers.get('ok')).toBeNull();
    for (const key of ['...', '.a', 'a/..', '../a']) {
      expect(await h.timers.schedule({ ...spec, key })).toMatchObject({ key });
    }
  });
});
