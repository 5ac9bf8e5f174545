import { SundialError, type TimerHandler, validateHandler } from '@sundial/core';
import type { DistributedCronMetadata } from './decorators/distributed-cron.decorator';

/** A `@DistributedCron` method found at boot; its handler is registered under `name` too. */
export interface DiscoveredCron extends DistributedCronMetadata {
  /** `Provider.method`, for messages */
  owner: string;
}

/**
 * The handlers of this app: `@OnTimer` and `@DistributedCron` methods found by the explorer, plus those
 * given as plain functions in options. `handlers` is one live object that the backend running them
 * (the in-memory engine or a TimerRunner) reads at each run.
 */
export class TimerHandlerRegistry {
  readonly handlers: Record<string, TimerHandler> = {};
  readonly crons: DiscoveredCron[] = [];
  private readonly owners = new Map<string, string>();

  constructor(plain: Readonly<Record<string, TimerHandler>> = {}, plainOwner = 'the handlers option') {
    for (const [name, handler] of Object.entries(plain)) this.add(name, handler, plainOwner);
  }

  /**
   * Registers `name`; a name no timer could use, or one already registered, stops the app at boot,
   * naming its owner (both owners).
   */
  add(name: string, handler: TimerHandler, owner: string): void {
    try {
      validateHandler(name);
    } catch (error) {
      const refused = (error as SundialError).toJSON();
      throw new SundialError({ ...refused, message: `${owner}: ${refused.message}` });
    }
    const first = this.owners.get(name);
    if (first !== undefined) {
      throw new SundialError({
        reason: 'invalid',
        field: 'handler',
        message: `The timer handler '${name}' is declared twice: by ${first} and by ${owner}.`,
        fix: `Give one of them another name: a handler name is unique in an app (@OnTimer, @DistributedCron and the handlers option share one namespace).`,
      });
    }
    this.owners.set(name, owner);
    this.handlers[name] = handler;
  }

  addCron(cron: DiscoveredCron, handler: TimerHandler): void {
    this.add(cron.name, handler, cron.owner);
    this.crons.push(cron);
  }

  /** Who registered `name` (`Provider.method`), if anyone. */
  ownerOf(name: string): string | undefined {
    return this.owners.get(name);
  }
}
