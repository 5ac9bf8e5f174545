import type { CliCluster } from '../cli-cluster';

/**
 * `sundial list`'s `more:` line is the command for the next page of the same listing (docs/spec.md §5.6).
 * With a relative `--due-before +1h` it repeated `+1h`, which, run later, is another bound than the one
 * the cursor's page was listed under: it now names the instant `+1h` meant. Keys `more:` its own.
 */
export const describeMorePages = (sundial: CliCluster) =>
  describe('sundial list: the more: line of a page', () => {
    it.concurrent(
      'with --due-before +1h, names the instant it meant; run, it lists the next page',
      async () => {
        for (const minutes of [10, 20, 30]) {
          const args = ['--key', `more:${minutes}`, '--handler', 'record', '--delay', `${minutes}m`];
          expect((await sundial(['schedule', ...args])).code).toBe(0);
        }
        const asked = Date.now();
        const first = await sundial(['list', '--prefix', 'more:', '--due-before', '+1h', '--limit', '2']);
        expect(first).toMatchObject({ code: 0, stderr: '' });
        const more = /\nmore: sundial list (.*)\n$/.exec(first.stdout);
        expect(more).not.toBeNull();
        const next = more![1].split(' ');
        expect(next.slice(0, 3)).toEqual(['--prefix', 'more:', '--due-before']);
        // the scheduler's now is this host's here (one machine): an hour after it, to the request's length
        const bound = Date.parse(next[3]);
        expect(next[3]).toBe(new Date(bound).toISOString());
        expect(bound - asked - 3_600_000).toBeGreaterThan(-5_000);
        expect(bound - Date.now() - 3_600_000).toBeLessThan(5_000);
        const second = await sundial(['list', ...next]);
        expect(second).toMatchObject({ code: 0, stderr: '' });
        expect(second.stdout).toMatch(/^KEY .*\nmore:30 +pending .*\n1 timer\(s\)\n$/);
      },
    );
  });
