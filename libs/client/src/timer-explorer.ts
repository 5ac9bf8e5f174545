import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { SundialError, type TimerHandler } from '@sundial/core';
import { DISTRIBUTED_CRON, type DistributedCronMetadata } from './decorators/distributed-cron.decorator';
import {
  DISTRIBUTED_INTERVAL,
  type DistributedIntervalMetadata,
} from './decorators/distributed-interval.decorator';
import { ON_TIMER, type OnTimerMetadata } from './decorators/on-timer.decorator';
import { checkDecoratorOptions } from './decorators/decorator-options';
import { readStacked } from './decorators/stacked-metadata';
import { TimerHandlerRegistry } from './handler-registry';
import { refuseSecondModule } from './one-module-check';

/**
 * Finds the `@OnTimer`, `@DistributedCron` and `@DistributedInterval` methods of every controller and provider at module init
 * (as `@nestjs/schedule`'s ScheduleExplorer does: a `@Cron` method of a controller moves there as it is)
 * and registers them, bound to their instance, in the app's TimerHandlerRegistry. From then on, a
 * handler lookup first explores the modules loaded since (LazyModuleLoader, which calls no lifecycle
 * hook): their `@OnTimer` methods are found at the first lookup after the load.
 */
@Injectable()
export class TimerExplorer implements OnModuleInit {
  private readonly logger = new Logger('Sundial');
  /** One instance listed under two tokens (a `useExisting` alias, a `useValue` given twice) is one handler. */
  private readonly explored = new Set<object>();
  /** the app's modules when last explored: a lazily loaded module adds to them */
  private modulesSeen = 0;

  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(TimerHandlerRegistry) private readonly registry: TimerHandlerRegistry,
    @Inject(ModulesContainer) private readonly modules: ModulesContainer,
  ) {}

  onModuleInit(): void {
    const providers = this.discovery.getProviders();
    refuseSecondModule(providers.filter((wrapper) => wrapper.token === TimerExplorer));
    this.modulesSeen = this.modules.size;
    for (const wrapper of [...this.discovery.getControllers(), ...providers]) this.exploreInstance(wrapper);
    this.registry.findLateWith(() => this.exploreLoaded());
  }

  /**
   * The modules loaded since (LazyModuleLoader): their new instances explored as at init, but a refusal
   * is logged, not thrown (it would fail a run or a call, not the boot, which is over), and a
   * `@DistributedCron` / `@DistributedInterval` found there runs if its row exists but keeps no row.
   */
  private exploreLoaded(): void {
    if (this.modules.size === this.modulesSeen) return;
    this.modulesSeen = this.modules.size;
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      try {
        this.exploreInstance(wrapper, true);
      } catch (error) {
        this.logger.error(
          `a module loaded after the app's init (LazyModuleLoader) declares a timer handler Sundial does not register: ${String(error)}`,
        );
      }
    }
  }

  private exploreInstance(wrapper: InstanceWrapper, late = false): void {
    const instance: unknown = wrapper.instance;
    if (instance === null || typeof instance !== 'object' || this.explored.has(instance)) return;
    this.explored.add(instance);
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) return;
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      this.explore(wrapper, instance as Record<string, unknown>, method, late);
    }
  }

  private explore(
    wrapper: InstanceWrapper,
    instance: Record<string, unknown>,
    method: string,
    late: boolean,
  ): void {
    const target = instance[method];
    if (typeof target !== 'function') return;
    const onTimers = readStacked<OnTimerMetadata>(ON_TIMER, target);
    const crons = readStacked<DistributedCronMetadata>(DISTRIBUTED_CRON, target);
    const intervals = readStacked<DistributedIntervalMetadata>(DISTRIBUTED_INTERVAL, target);
    if (onTimers.length + crons.length + intervals.length === 0) return;
    const owner = `${instance.constructor.name}.${method}`;
    refuseScoped(wrapper, owner, instance.constructor.name);
    checkDecoratorOptions(owner, onTimers, crons, intervals);
    refuseNameStackedTwice(owner, [...onTimers, ...crons, ...intervals]);
    const handler = (target as TimerHandler).bind(instance) as TimerHandler;
    for (const onTimer of onTimers) this.registry.add(onTimer.name, handler, owner, onTimer);
    if (late) return this.addLate(owner, handler, onTimers, [...crons, ...intervals]);
    for (const row of [...crons, ...intervals]) this.registry.addCron({ ...row, owner }, handler);
  }

  /** A lazily loaded module's methods: handlers from now on; its rows were declared (or not) at boot. */
  private addLate(
    owner: string,
    handler: TimerHandler,
    onTimers: readonly OnTimerMetadata[],
    rows: readonly (DistributedCronMetadata | DistributedIntervalMetadata)[],
  ): void {
    const names = [...onTimers, ...rows].map(({ name }) => `'${name}'`).join(', ');
    this.logger.log(
      `${owner} handles ${names}: found in a module loaded after the app's init (LazyModuleLoader).`,
    );
    for (const row of rows) {
      this.registry.add(row.name, handler, owner, row);
      const decorator = row.kind === 'cron' ? '@DistributedCron' : '@DistributedInterval';
      this.logger.warn(
        `${decorator}('${row.name}') on ${owner} is in a module loaded after the app's init (LazyModuleLoader): its row is not written, kept or removed (rows are declared at boot). ` +
          `Import its module in the app (the module that imports SundialModule), or declare the row in a module that is.`,
      );
    }
  }
}

/**
 * A timer's run is no request and no consumer, so its handler needs the one instance of a singleton:
 * a request-scoped provider (itself, or through a provider it injects) has none outside a request, and
 * a transient one has one per consumer, while the instance Nest lists for it is a bare prototype it
 * never constructed (its injected fields undefined: the run would fail on `this.mailer`).
 */
function refuseScoped(wrapper: InstanceWrapper, owner: string, provider: string): void {
  const scope = !wrapper.isDependencyTreeStatic()
    ? 'request-scoped (itself, or through a provider it injects): a timer run has no request'
    : wrapper.isTransient
      ? 'transient: Nest makes one instance per consumer, and the one it lists is never constructed'
      : undefined;
  if (scope === undefined) return;
  throw new SundialError({
    reason: 'invalid',
    field: 'handler',
    message: `${owner} handles timers but ${provider} is ${scope}.`,
    fix: `Declare @OnTimer/@DistributedCron/@DistributedInterval methods in a singleton provider (the default scope); it may call a scoped one through ModuleRef.resolve().`,
  });
}

/** One method under one name twice (`@OnTimer('a') @OnTimer('a')`): said as such, not as two instances. */
function refuseNameStackedTwice(owner: string, declared: readonly { name: string }[]): void {
  const names = declared.map(({ name }) => name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice === undefined) return;
  throw new SundialError({
    reason: 'invalid',
    field: 'handler',
    message: `The timer handler '${twice}' is declared twice on ${owner}: two of its decorators give that name.`,
    fix: `Remove one of them: a method runs under each name it is given once.`,
  });
}
