import { Injectable } from '@nestjs/common';

export type Phase = 'starting' | 'running' | 'stopping';

/** Where the process is in its life; readiness is refused while starting and once shutdown began. */
@Injectable()
export class Lifecycle {
  private current: Phase = 'starting';

  get phase(): Phase {
    return this.current;
  }

  markRunning(): void {
    if (this.current === 'starting') this.current = 'running';
  }

  markStopping(): void {
    this.current = 'stopping';
  }
}
