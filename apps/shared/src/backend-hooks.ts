import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { Inject, Injectable } from '@nestjs/common';
import { Lifecycle } from './lifecycle';

/** An app's background part (the scheduler's loops, the worker's job consumers), run with Nest. */
export interface AppBackend {
  start(): Promise<void>;
  /** stops it and releases its connections; the worker drains its runs first */
  stop(): Promise<void>;
}

/** The token an app module provides its `AppBackend` under. */
export const APP_BACKEND = Symbol('AppBackend');

/**
 * Starts and stops the app's backend with Nest, in the order readiness needs: started before the app
 * reports running, and reported stopping (readiness 503) before it drains.
 */
@Injectable()
export class BackendHooks implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(APP_BACKEND) private readonly backend: AppBackend,
    @Inject(Lifecycle) private readonly lifecycle: Lifecycle,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.backend.start();
    this.lifecycle.markRunning();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.markStopping();
    await this.backend.stop();
  }
}
