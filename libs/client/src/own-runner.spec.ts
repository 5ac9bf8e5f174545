import { OwnRunner } from './own-runner';

/** A promise resolved from outside: the runner's announcement. */
function announcement() {
  let announce!: () => void;
  const announced = new Promise<void>((resolve) => (announce = resolve));
  return { announced, announce };
}

describe("OwnRunner: the registrar's boot pass and the app's own runner (docs/spec.md §5.1)", () => {
  it('without a runner of its own the boot pass is awaited at once', async () => {
    const own = new OwnRunner();
    expect(await own.announced(10_000)).toBe('announced'); // deadline: no runner, answered at once
    const boot = Promise.reject(new Error('refused'));
    await expect(own.hold(boot, () => undefined)).rejects.toThrow('refused');
  });

  it("the registrar's hook first: the pass is handed to the worker's start, which ends after it (and fails with it)", async () => {
    const own = new OwnRunner();
    const { announced, announce } = announcement();
    own.expect(announced);
    const order: string[] = [];
    const boot = own.announced().then(() => {
      order.push('pass');
      throw new Error('refused');
    });
    const unawaited = jest.fn();
    await own.hold(boot, unawaited); // resolved at once: awaiting the announcement here would never end
    const started = own.startWith(async () => {
      order.push('runner started');
      announce();
    });
    await expect(started).rejects.toThrow('refused');
    expect(order).toEqual(['runner started', 'pass']);
    expect(unawaited).not.toHaveBeenCalled(); // the start said it
  });

  it("the worker's start first: the registrar's hook awaits the pass itself", async () => {
    const own = new OwnRunner();
    const { announced, announce } = announcement();
    own.expect(announced);
    let release!: () => void;
    const runnerStarted = new Promise<void>((resolve) => (release = resolve));
    const started = own.startWith(() => runnerStarted);
    let written = false;
    const boot = own.announced().then(() => void (written = true));
    const held = own.hold(boot, () => undefined).then(() => written);
    announce();
    release();
    await started;
    await expect(held).resolves.toBe(true); // settled with the pass, not before it
  });

  it('a runner that never announces (autoStart: false, never started): the wait ends late, a failure nobody awaits is said', async () => {
    const own = new OwnRunner();
    own.expect(new Promise<void>(() => undefined));
    expect(await own.announced(20)).toBe('late');
    const unawaited = jest.fn();
    await own.hold(Promise.reject(new Error('refused')), unawaited);
    await new Promise(setImmediate);
    expect(unawaited).toHaveBeenCalledWith(new Error('refused'));
  });

  it('the app closing ends the wait', async () => {
    const own = new OwnRunner();
    own.expect(new Promise<void>(() => undefined));
    const wait = own.announced(60_000); // deadline: ended by the close
    own.closing();
    expect(await wait).toBe('closed');
  });
});
