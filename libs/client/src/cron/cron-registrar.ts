import {
  Inject,
  Injectable,
  type InjectionToken,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ensureOwnedRow, removeOwnedRows, type RowOwner, SundialError } from '@sundial/core';
import type { CronExpressionSource } from '../decorators/distributed-cron.decorator';
import { type DiscoveredCron, TimerHandlerRegistry } from '../handler-registry';
import { SUNDIAL_MODULE_OPTIONS } from '../sundial.module-definition';
import type { SundialModuleOptions } from '../sundial-module-options';
import { connectBackend } from '../create-backend';
import { Timers } from '../timers';
import { CRON_KEY_PREFIX, cronKey, cronRowOwner, cronSpec } from './cron-rows';

const DEFAULT_APP = 'app';

/**
 * Keeps one row per `@DistributedCron` (docs/spec.md §5.1), at every boot of every replica: creates the
 * missing ones, replaces those whose expression, zone, delivery or policies changed, and removes the rows this app
 * owns whose decorator is gone or `disabled`. Replicas booting together converge on one row per name: a
 * create that loses the race finds the winner's row equal to its own. Rows without this app's owner
 * marker (created through the API) are never touched. After a global `cancelAll()` (`reset`) it
 * registers its rows again (an app that declares none does not listen for it).
 */
@Injectable()
export class CronRegistrar implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Sundial');
  private readonly app: string;
  /** whether the app named itself (`appName`), or goes by the default every unnamed service shares */
  private readonly named: boolean;
  private readonly owner: RowOwner;
  private stopFollowingReset = (): void => undefined;

  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(TimerHandlerRegistry) private readonly registry: TimerHandlerRegistry,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(SUNDIAL_MODULE_OPTIONS) options: SundialModuleOptions,
  ) {
    this.app = options.appName ?? DEFAULT_APP;
    this.named = options.appName !== undefined;
    this.owner = cronRowOwner(this.app);
  }

  async onApplicationBootstrap(): Promise<void> {
    // The boot's first touch of Redis (every SundialModule app has this hook): a Redis away for a moment
    // is waited for here, not met by the pass's first call failing the boot (`unavailable`).
    await connectBackend(this.timers);
    // Only an app with crons to register again listens: a listener on `P:events` makes every script
    // build and publish its events (docs/design.md "Events"), a cost on every timer of every app. It
    // listens before the first pass, whose calls wait for the subscription (RedisTimers): a reset from
    // the moment the app is up on is seen.
    if (this.registry.crons.some((cron) => !cron.disabled)) {
      this.stopFollowingReset = this.timers.on('reset', () => void this.sync().catch(() => undefined));
    }
    await this.sync();
  }

  onModuleDestroy(): void {
    this.stopFollowingReset();
  }

  /**
   * One pass: every declared row written if it differs, every orphaned owned row removed — except by an
   * app that declares no @DistributedCron and has no `appName` of its own: under the default name, that
   * is as likely another service on the same Redis (an API that only schedules timers) as the crons' own
   * app after its last decorator went, and removing would delete the other service's crons at each of its
   * boots. Such a row is removed by its app, named or with the cron marked `disabled`.
   */
  async sync(): Promise<void> {
    const declared = this.registry.crons.filter((cron) => !cron.disabled);
    for (const cron of declared) await this.ensure(cron);
    if (!this.named && this.registry.crons.length === 0) return;
    const keep = new Set(declared.map((cron) => cronKey(cron.name)));
    for (const key of await removeOwnedRows(this.timers, this.owner, keep, CRON_KEY_PREFIX)) {
      // Also what an app does to another's rows under the same appName: said.
      this.logger.warn(
        `removed ${key}: its @DistributedCron('${key.slice(CRON_KEY_PREFIX.length)}') is gone from this app or disabled (appName '${this.app}'). ` +
          `A service with other @DistributedCron methods on this Redis and prefix needs an appName of its own.`,
      );
    }
  }

  private async ensure(cron: DiscoveredCron): Promise<void> {
    const spec = cronSpec(withOverlap(cron), await this.expressionOf(cron), this.app);
    const outcome = await ensureOwnedRow(this.timers, spec, this.owner).catch((error: unknown) => {
      throw withOwner(cron, error);
    });
    if (outcome === 'foreign') {
      throw refusal(
        cron,
        'key',
        `the key ${spec.key} holds a timer this app did not create (created through the API or by another app).`,
        `Rename the @DistributedCron, or cancel ${spec.key} if it is a leftover.`,
      );
    }
  }

  private async expressionOf(cron: DiscoveredCron): Promise<string> {
    const source: CronExpressionSource = cron.expression;
    if (typeof source === 'string') return source;
    const from =
      'config' in source ? `config key '${source.config}'` : `provider ${tokenName(source.inject)}`;
    const value: unknown =
      'config' in source
        ? (await this.configService(cron, from)).get<unknown>(source.config)
        : this.provided(
            cron,
            source.inject,
            from,
            `Provide ${tokenName(source.inject)} (useValue: "0 9 * * *")`,
          );
    if (typeof value !== 'string' || value.trim() === '') {
      throw refusal(
        cron,
        'cron',
        `the ${from} gives ${JSON.stringify(value)}, not a cron expression.`,
        `Set ${from} to a cron expression such as "0 9 * * *".`,
      );
    }
    return value;
  }

  /** @nestjs/config is loaded only by apps whose crons read it: SundialModule works without it. */
  private async configService(
    cron: DiscoveredCron,
    from: string,
  ): Promise<{ get<T>(key: string): T | undefined }> {
    const config = await import('@nestjs/config').catch(() => undefined);
    if (!config) {
      throw refusal(
        cron,
        'cron',
        'its expression comes from a config key, but @nestjs/config is not installed.',
        'npm install @nestjs/config and import ConfigModule.forRoot(), or write the expression in code.',
      );
    }
    return this.provided(
      cron,
      config.ConfigService,
      from,
      'Import ConfigModule.forRoot({ isGlobal: true }) (in a test module too)',
    );
  }

  /** The provider an expression is read through; Nest's bare "could not find" becomes a refusal. */
  private provided<T>(cron: DiscoveredCron, token: InjectionToken, from: string, provide: string): T {
    try {
      return this.moduleRef.get<T>(token, { strict: false });
    } catch {
      throw refusal(
        cron,
        'cron',
        `its expression comes from the ${from}, but this app provides no ${tokenName(token)}.`,
        `${provide}, or write the expression in code.`,
      );
    }
  }
}

/**
 * `waitForCompletion` in Sundial's words: `false` is `overlap: 'allow'` (the next slot is armed at the
 * claim, as `@Cron`'s `false` lets one process run ticks side by side); `true` waits for the run, which
 * `allow` and `cancel-other` do not. An `overlap` that says otherwise stops the boot.
 */
function withOverlap(cron: DiscoveredCron): DiscoveredCron {
  const { waitForCompletion, overlap } = cron;
  if (waitForCompletion === undefined) return cron;
  const detached = overlap === 'allow' || overlap === 'cancel-other';
  if (waitForCompletion === false && overlap !== undefined && overlap !== 'allow') {
    throw refusal(
      cron,
      'waitForCompletion',
      `waitForCompletion: false (runs overlap: overlap 'allow') contradicts overlap '${overlap}'.`,
      `Remove waitForCompletion, or set overlap: 'allow'.`,
    );
  }
  if (waitForCompletion && detached) {
    throw refusal(
      cron,
      'waitForCompletion',
      `waitForCompletion: true contradicts overlap '${overlap}', which does not wait for the run.`,
      'Remove waitForCompletion, or choose an overlap that waits (skip or buffer-one).',
    );
  }
  return waitForCompletion ? cron : { ...cron, overlap: 'allow' };
}

function refusal(cron: DiscoveredCron, field: string, message: string, fix: string): SundialError {
  return new SundialError({
    reason: 'invalid',
    field,
    message: `@DistributedCron('${cron.name}') on ${cron.owner}: ${message}`,
    fix,
  });
}

/** A refused row names the decorator it came from. */
function withOwner(cron: DiscoveredCron, error: unknown): unknown {
  if (!(error instanceof SundialError)) return error;
  return new SundialError({
    ...error.toJSON(),
    message: `@DistributedCron('${cron.name}') on ${cron.owner}: ${error.message}`,
  });
}

function tokenName(token: InjectionToken): string {
  return typeof token === 'function' ? token.name : String(token);
}
