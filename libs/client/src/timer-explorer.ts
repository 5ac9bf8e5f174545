import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
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
 * and registers them, bound to their instance, in the app's TimerHandlerRegistry.
 */
@Injectable()
export class TimerExplorer implements OnModuleInit {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(TimerHandlerRegistry) private readonly registry: TimerHandlerRegistry,
  ) {}

  onModuleInit(): void {
    const providers = this.discovery.getProviders();
    refuseSecondModule(providers.filter((wrapper) => wrapper.token === TimerExplorer));
    // One instance listed under two tokens (a `useExisting` alias, a `useValue` given twice) is one
    // handler: explored once. Two instances of one class are two, refused by the registry.
    const explored = new Set<object>();
    for (const wrapper of [...this.discovery.getControllers(), ...providers]) {
      const instance: unknown = wrapper.instance;
      if (instance === null || typeof instance !== 'object' || explored.has(instance)) continue;
      explored.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        this.explore(wrapper, instance as Record<string, unknown>, method);
      }
    }
  }

  private explore(wrapper: InstanceWrapper, instance: Record<string, unknown>, method: string): void {
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
    for (const row of [...crons, ...intervals]) this.registry.addCron({ ...row, owner }, handler);
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
