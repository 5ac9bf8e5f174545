import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { SundialError, type TimerHandler } from '@sundial/core';
import { DISTRIBUTED_CRON, type DistributedCronMetadata } from './decorators/distributed-cron.decorator';
import {
  DISTRIBUTED_INTERVAL,
  type DistributedIntervalMetadata,
} from './decorators/distributed-interval.decorator';
import { ON_TIMER, type OnTimerMetadata } from './decorators/on-timer.decorator';
import { checkDecoratorOptions } from './decorators/decorator-options';
import { TimerHandlerRegistry } from './handler-registry';

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
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(TimerHandlerRegistry) private readonly registry: TimerHandlerRegistry,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const instance: unknown = wrapper.instance;
      if (instance === null || typeof instance !== 'object') continue;
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
    const onTimer = this.reflector.get<OnTimerMetadata | undefined>(ON_TIMER, target);
    const cron = this.reflector.get<DistributedCronMetadata | undefined>(DISTRIBUTED_CRON, target);
    const interval = this.reflector.get<DistributedIntervalMetadata | undefined>(
      DISTRIBUTED_INTERVAL,
      target,
    );
    if (onTimer === undefined && cron === undefined && interval === undefined) return;
    const owner = `${instance.constructor.name}.${method}`;
    if (!wrapper.isDependencyTreeStatic()) {
      throw new SundialError({
        reason: 'invalid',
        field: 'handler',
        message: `${owner} handles timers but ${instance.constructor.name} is request-scoped: a timer run has no request.`,
        fix: `Declare @OnTimer/@DistributedCron/@DistributedInterval methods in a singleton provider (the default scope).`,
      });
    }
    checkDecoratorOptions(owner, onTimer, cron, interval);
    const handler = (target as TimerHandler).bind(instance) as TimerHandler;
    if (onTimer !== undefined) this.registry.add(onTimer.name, handler, owner, onTimer);
    if (cron !== undefined) this.registry.addCron({ ...cron, owner }, handler);
    if (interval !== undefined) this.registry.addCron({ ...interval, owner }, handler);
  }
}
