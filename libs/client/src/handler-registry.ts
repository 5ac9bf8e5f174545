import {
  type Clock,
  isSundialError,
  SundialError,
  type TimerHandler,
  validateHandler,
  withTimeout,
} from '@sundial/core';
import type { DistributedCronMetadata } from './decorators/distributed-cron.decorator';
import type { DistributedIntervalMetadata } from './decorators/distributed-interval.decorator';
import type { HandlerOptions } from './decorators/on-timer.decorator';

/** A `@DistributedCron` method found at boot; its handler is registered under `name` too. */
export interface DiscoveredCron extends DistributedCronMetadata {
  /** `Provider.method`, for messages */
  owner: string;
}

/** A `@DistributedInterval` method found at boot; its handler is registered under `name` too. */
export interface DiscoveredInterval extends DistributedIntervalMetadata {
  /** `Provider.method`, for messages */
  owner: string;
}

/** A row declared in code, kept by the registrar (docs/spec.md §5.1). */
export type DiscoveredRow = DiscoveredCron | DiscoveredInterval;

/**
 * The handlers of this app: `@OnTimer`, `@DistributedCron` and `@DistributedInterval` methods found by the explorer, plus those
 * given as plain functions in options. `handlers` is one live object that the backend running them
 * (the in-memory engine or a TimerRunner) reads at each run.
 */
export class TimerHandlerRegistry {
  /** no prototype: a handler named `__proto__` or `toString` is an own entry like any other */
  private readonly byName = Object.create(null) as Record<string, TimerHandler>;
  /** what finds the methods of modules loaded since the app's init (LazyModuleLoader); none before it */
  private lateFinder: (() => void) | undefined;
  private finding = false;
  /**
   * The handlers by name. Each lookup (a run's, a `schedule`'s check, a worker's announcement) first
   * lets the explorer find the methods of a module loaded since (LazyModuleLoader, which calls no
   * lifecycle hook): before, they were never found, and their timers failed `unknown-handler`.
   */
  readonly handlers: Record<string, TimerHandler> = new Proxy(this.byName, {
    get: (target, name) => (this.findLate(), Reflect.get(target, name)),
    has: (target, name) => (this.findLate(), Reflect.has(target, name)),
    ownKeys: (target) => (this.findLate(), Reflect.ownKeys(target)),
    getOwnPropertyDescriptor: (target, name) => (
      this.findLate(),
      Reflect.getOwnPropertyDescriptor(target, name)
    ),
  });
  /** the `@DistributedCron` and `@DistributedInterval` rows, in the order found */
  readonly crons: DiscoveredRow[] = [];
  private readonly owners = new Map<string, string>();

  /** `clock`: the backend's, where a handler's timeout is armed (a VirtualClock under the testing module). */
  constructor(
    plain: Readonly<Record<string, TimerHandler>> = {},
    plainOwner = 'the handlers option',
    private readonly clock?: Clock,
  ) {
    for (const [name, handler] of Object.entries(plain)) this.add(name, handler, plainOwner);
  }

  /**
   * Registers `name`, bounded by its `timeout` if given; a name no timer could use, a timeout that is not
   * one, or a name already registered stops the app at boot, naming its owner (both owners).
   */
  add(name: string, handler: TimerHandler, owner: string, options: HandlerOptions = {}): void {
    const run = refusedAs(owner, () => {
      validateHandler(name);
      const { timeout } = options;
      return timeout === undefined ? handler : withTimeout(handler, timeout, { name, clock: this.clock });
    });
    const first = this.owners.get(name);
    if (first === owner) {
      // one method found twice: Nest made two instances of its class
      const provider = owner.slice(0, owner.lastIndexOf('.'));
      throw new SundialError({
        reason: 'invalid',
        field: 'handler',
        message: `The timer handler '${name}' is declared twice: ${owner} is found on two instances of ${provider} (listed in the providers of two modules, or under two tokens).`,
        fix: `Provide ${provider} in one module and export it to the modules that use it: each listing makes another instance, and each would run '${name}'.`,
      });
    }
    if (first !== undefined) {
      throw new SundialError({
        reason: 'invalid',
        field: 'handler',
        message: `The timer handler '${name}' is declared twice: by ${first} and by ${owner}.`,
        fix: `Give one of them another name: a handler name is unique in an app (@OnTimer, @DistributedCron and the handlers option share one namespace).`,
      });
    }
    this.owners.set(name, owner);
    this.byName[name] = followedBy(this.clock, run);
  }

  addCron(cron: DiscoveredRow, handler: TimerHandler): void {
    this.add(cron.name, handler, cron.owner, cron);
    this.crons.push(cron);
  }

  /** From the app's init on: `finder` is asked before each lookup (it returns at once when no module was loaded since). */
  findLateWith(finder: () => void): void {
    this.lateFinder = finder;
  }

  private findLate(): void {
    if (!this.lateFinder || this.finding) return;
    this.finding = true;
    try {
      this.lateFinder();
    } finally {
      this.finding = false;
    }
  }

  /** Who registered `name` (`Provider.method`), if anyone. */
  ownerOf(name: string): string | undefined {
    return this.owners.get(name);
  }
}

/** What `make` returns, or its refusal with the message naming `owner` (`Provider.method: …`). */
function refusedAs<T>(owner: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (!isSundialError(error)) throw error;
    throw new SundialError({ ...error.toJSON(), message: `${owner}: ${error.message}` });
  }
}

/**
 * A clock that follows each run as it starts: SundialTestingModule's with `settleMs`, whose `advance`
 * waits for the runs a tick started (handlers awaiting real I/O) before time moves on.
 */
interface RunFollower {
  followRun(run: PromiseLike<unknown>): void;
}

function followedBy(clock: Clock | undefined, handler: TimerHandler): TimerHandler {
  const follower = clock as Partial<RunFollower> | undefined;
  if (typeof follower?.followRun !== 'function') return handler;
  return (payload, ctx) => {
    const result = handler(payload, ctx);
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      follower.followRun!(result as PromiseLike<unknown>);
    }
    return result;
  };
}
