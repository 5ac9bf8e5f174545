import type { InjectionToken } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import type { DiscoveredCron, DiscoveredInterval, DiscoveredRow } from '../handler-registry';
import { rowRefusal } from './row-refusal';

type Source = { config: string } | { inject: InjectionToken };

/** A string of digits from a config key is a period in ms (environment variables are strings). */
const DIGITS = /^\d+$/;

/**
 * Reads what a decorator left to the app: a `@DistributedCron`'s expression or a `@DistributedInterval`'s
 * period, written in code, a `ConfigService` key or a provider's value. A source the app does not provide,
 * or a value of the wrong type, stops the boot naming the decorator and the key or token.
 */
export class RowSources {
  constructor(private readonly moduleRef: ModuleRef) {}

  async expression(cron: DiscoveredCron): Promise<string> {
    const source = cron.expression;
    if (typeof source === 'string') return source;
    const { value, from } = await this.read(cron, 'cron', source, '"0 9 * * *"');
    if (typeof value !== 'string' || value.trim() === '') {
      throw rowRefusal(
        cron,
        'cron',
        `the ${from} gives ${JSON.stringify(value)}, not a cron expression.`,
        `Set ${from} to a cron expression such as "0 9 * * *".`,
      );
    }
    return value;
  }

  /** The period as given (ms or a Duration): `schedule` validates it as it validates any `every`. */
  async period(interval: DiscoveredInterval): Promise<number | string> {
    const source = interval.every;
    if (typeof source === 'number' || typeof source === 'string') return source;
    const { value, from } = await this.read(interval, 'every', source, '"30s"');
    if (typeof value === 'number') return value;
    if (typeof value !== 'string' || value.trim() === '') {
      throw rowRefusal(
        interval,
        'every',
        `the ${from} gives ${JSON.stringify(value)}, not a period.`,
        `Set ${from} to a period such as "30s", "5m" or 30000 (ms).`,
      );
    }
    return DIGITS.test(value.trim()) ? Number(value) : value.trim();
  }

  /** Where a row's expression or period comes from (`config key 'X'`, `provider T`); undefined: in code. */
  static sourceOf(row: DiscoveredRow): string | undefined {
    const source = row.kind === 'cron' ? row.expression : row.every;
    if (typeof source !== 'object') return undefined;
    return 'config' in source ? `config key '${source.config}'` : `provider ${tokenName(source.inject)}`;
  }

  private async read(
    row: DiscoveredRow,
    field: string,
    source: Source,
    example: string,
  ): Promise<{ value: unknown; from: string }> {
    const what = field === 'cron' ? 'expression' : 'period';
    if ('config' in source) {
      const from = RowSources.sourceOf(row)!;
      const config = await this.configService(row, field, what, from);
      return { value: config.get<unknown>(source.config), from };
    }
    const from = RowSources.sourceOf(row)!;
    const provide = `Provide ${tokenName(source.inject)} (useValue: ${example})`;
    return { value: this.provided(row, field, what, source.inject, from, provide), from };
  }

  /** @nestjs/config is loaded only by apps whose rows read it: SundialModule works without it. */
  private async configService(
    row: DiscoveredRow,
    field: string,
    what: string,
    from: string,
  ): Promise<{ get<T>(key: string): T | undefined }> {
    const config = await import('@nestjs/config').catch(() => undefined);
    if (!config) {
      throw rowRefusal(
        row,
        field,
        `its ${what} comes from a config key, but @nestjs/config is not installed.`,
        `npm install @nestjs/config and import ConfigModule.forRoot(), or write the ${what} in code.`,
      );
    }
    return this.provided(
      row,
      field,
      what,
      config.ConfigService,
      from,
      'Import ConfigModule.forRoot({ isGlobal: true }) (in a test module too)',
    );
  }

  /** The provider a value is read through; Nest's bare "could not find" becomes a refusal. */
  private provided<T>(
    row: DiscoveredRow,
    field: string,
    what: string,
    token: InjectionToken,
    from: string,
    provide: string,
  ): T {
    try {
      return this.moduleRef.get<T>(token, { strict: false });
    } catch {
      throw rowRefusal(
        row,
        field,
        `its ${what} comes from the ${from}, but this app provides no ${tokenName(token)}.`,
        `${provide}, or write the ${what} in code.`,
      );
    }
  }
}

function tokenName(token: InjectionToken): string {
  return typeof token === 'function' ? token.name : String(token);
}
