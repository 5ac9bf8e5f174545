import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { Inject, Injectable } from '@nestjs/common';
import { Lifecycle } from './lifecycle';

/** An app service: an app's background part (the scheduler's loops, the worker's job consumers), run with Nest. */
export interface AppService {
  start(): Promise<void>;
  /** stops it and releases its connections; the worker drains its runs first */
  stop(): Promise<void>;
}

/** The token an app module provides its `AppService` under. */
export const APP_SERVICE = Symbol('AppService');

/**
 * Starts and stops the app service with Nest, in the order readiness needs: started before the app
 * reports running, and reported stopping (readiness 503) before it drains.
 */
@Injectable()
export class AppServiceHooks implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(APP_SERVICE) private readonly service: AppService,
    @Inject(Lifecycle) private readonly lifecycle: Lifecycle,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.service.start();
    this.lifecycle.markRunning();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.markStopping();
    await this.service.stop();
  }
}
