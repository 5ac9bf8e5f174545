import { type ChromiumCluster, usePage } from '../chromium-fixture';

/** The UTC offset of America/Toronto at `at`, `-05:00` or `-04:00`, as Node's ICU has it. */
function torontoOffset(at: Date): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Toronto',
    timeZoneName: 'longOffset',
  }).formatToParts(at);
  return parts.find((part) => part.type === 'timeZoneName')!.value.replace('GMT', '');
}

/**
 * docs/spec.md §5.6: times are shown in the browser's zone, the header naming it with its offset now. A
 * time at the zone's other offset (a July due time read in December, across daylight saving) shows its
 * own offset: before, `2027-07-15 08:00:00` under "UTC-05:00" read as 13:00 UTC, an hour off the 12:00 it is.
 */
export function describeTimeZones(shared: ChromiumCluster): void {
  describe('operator UI: times across a daylight-saving change, in chromium', () => {
    const cluster = usePage(shared);

    it('a due time at another offset than the header names says its own; one at the header’s does not', async () => {
      const year = new Date().getUTCFullYear() + 1;
      const dues = { 'zone:january': `${year}-01-15T12:00:00Z`, 'zone:july': `${year}-07-15T12:00:00Z` };
      for (const [key, at] of Object.entries(dues))
        await cluster.api('POST', '/v1/timers', { key, handler: 'record', at });
      const { page } = cluster;
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'America/Toronto' });
      try {
        await page.goto(`${cluster.ui}#/?prefix=zone:`);
        await page.getByRole('link', { name: 'zone:july' }).waitFor();
        const now = torontoOffset(new Date());
        expect(await page.locator('#zone').textContent()).toBe(`Times in America/Toronto (UTC${now})`);
        const wall = { 'zone:january': `${year}-01-15 07:00:00`, 'zone:july': `${year}-07-15 08:00:00` };
        for (const [key, at] of Object.entries(dues)) {
          const offset = torontoOffset(new Date(at));
          const shown =
            offset === now
              ? wall[key as keyof typeof wall]
              : `${wall[key as keyof typeof wall]} (UTC${offset})`;
          const row = page.getByRole('row', { name: new RegExp(`^${key} `) });
          expect(await row.locator('td').nth(4).textContent()).toMatch(
            new RegExp(`^${shown.replace(/[()+]/g, '\\$&')} \\(in `),
          );
        }
      } finally {
        await cdp.send('Emulation.setTimezoneOverride', { timezoneId: '' });
        await cdp.detach();
      }
    });
  });
}
