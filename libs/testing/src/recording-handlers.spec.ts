import { work } from './recording-handlers';

/** The test handlers' wait (virtual clock: nothing here passes time unless it advances it). */
describe('recording handlers: work', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  async function endsAt(ms: number, signal: AbortSignal): Promise<number | undefined> {
    let ended: number | undefined;
    const started = Date.now();
    void work(ms, signal).then(() => (ended = Date.now() - started));
    await jest.advanceTimersByTimeAsync(0);
    return ended;
  }

  it('ends at once for a run aborted before it began (no abort event comes then)', async () => {
    expect(await endsAt(20_000, AbortSignal.abort())).toBe(0);
  });

  it('ends when the run is aborted while it works, else after its time', async () => {
    const controller = new AbortController();
    let ended = false;
    void work(20_000, controller.signal).then(() => (ended = true));
    await jest.advanceTimersByTimeAsync(5_000);
    expect(ended).toBe(false);
    controller.abort();
    await jest.advanceTimersByTimeAsync(0);
    expect(ended).toBe(true);
    let timeUp = false;
    void work(1_000, new AbortController().signal).then(() => (timeUp = true));
    await jest.advanceTimersByTimeAsync(999);
    expect(timeUp).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(timeUp).toBe(true);
  });
});
