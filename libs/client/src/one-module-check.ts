import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { SundialError } from '@sundial/core';
import { SUNDIAL_MODULE_OPTIONS } from './sundial.module-definition';
import type { SundialModuleOptions } from './sundial-module-options';

/**
 * Stops the boot of an app that holds SundialModule more than once (`forRoot` in two feature modules
 * with different options, or `SundialTestingModule` beside an AppModule that imports SundialModule).
 * Each copy finds every decorated method of the app and keeps the `@DistributedCron` and
 * `@DistributedInterval` rows in its own backend (in memory, or under another prefix, every slot ran once
 * per copy; on one Redis prefix with two appNames, the second copy's boot stopped on the first's rows),
 * and which copy's `Timers` a provider got was Nest's choice. Each `forRoot` call is a copy, even with
 * the same options. `explorers`: the wrappers of each copy's TimerExplorer.
 */
export function refuseSecondModule(explorers: readonly InstanceWrapper[]): void {
  if (explorers.length < 2) return;
  const copies = explorers.map((wrapper) => copyOf(wrapper)).join('; ');
  throw new SundialError({
    reason: 'invalid',
    field: 'imports',
    message: `SundialModule is in this app ${explorers.length} times (${copies}): each copy finds every decorated method and keeps the @DistributedCron and @DistributedInterval rows in its own backend (in memory, or another Redis prefix: each slot runs once per copy), and which copy's Timers a provider gets is Nest's choice.`,
    fix: 'Import SundialModule.forRoot (or forRootAsync) once, in the root module: it is global, other modules inject Timers. In a test, import SundialTestingModule beside your feature modules instead of the AppModule that imports SundialModule.',
  });
}

/** One copy by what tells it apart: its backend, prefix and appName. */
function copyOf(explorer: InstanceWrapper): string {
  const options = explorer.host?.getProviderByKey<SundialModuleOptions>(SUNDIAL_MODULE_OPTIONS)?.instance;
  if (options === undefined) return 'options unknown';
  const where = options.backend === 'memory' ? 'memory' : `Redis prefix '${options.prefix ?? 'sundial'}'`;
  return `${where}, appName '${options.appName ?? 'app'}'`;
}
