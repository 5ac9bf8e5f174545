/**
 * Compile-time test of `Timers`' payload types (docs/spec.md §5.1), checked by `npm run typecheck` (not a
 * jest suite): every `@ts-expect-error` line must fail to compile, every other line must compile. Before,
 * `schedule` took a `JsonInput`, which needs an index signature: a payload of an `interface` type, the
 * natural code of a Nest app, did not compile.
 */
import { Injectable } from '@nestjs/common';
import type { JsonValue, TimerContext, TimerSpec } from '@sundial/core';
import { SundialTestingModule } from '@sundial/testing';
import { OnTimer } from './decorators/on-timer.decorator';
import { SundialModule } from './sundial.module';
import { SundialWorkerModule } from './worker/sundial-worker.module';
import type { Timers } from './timers';

interface Remind {
  userId: string;
  at?: number;
  tags: readonly string[];
  channel: { kind: 'mail' | 'sms'; to: string | null };
}
interface WithDate {
  userId: string;
  at: Date;
}
interface WithMethod {
  userId: string;
  send(): void;
}
class Entity {
  id = 'e-1';
  load(): void {}
}

@Injectable()
export class Reminders {
  constructor(private readonly timers: Timers) {}

  remindLater(remind: Remind) {
    return this.timers.schedule({
      key: `remind:${remind.userId}`,
      handler: 'remind',
      payload: remind,
      delay: '1d',
    });
  }

  remindAll(reminds: Remind[]) {
    return this.timers.scheduleMany(
      reminds.map((payload) => ({ key: payload.userId, handler: 'remind', payload, delay: 5 })),
    );
  }

  previewOne(remind: Remind) {
    return this.timers.preview({ key: 'k', handler: 'remind', payload: remind, every: '1h' });
  }

  // a spec declared apart names its payload's type
  declared(remind: Remind) {
    const spec: TimerSpec<Remind> = { key: 'k', handler: 'remind', payload: remind, delay: 5 };
    return this.timers.schedule(spec);
  }

  // what compiled before still does: no payload, literals, optional fields, `as const`
  literals(maybe: string | undefined) {
    return Promise.all([
      this.timers.schedule({ key: 'k', handler: 'h', delay: 5 }),
      this.timers.schedule({
        key: 'k',
        handler: 'h',
        payload: { id: 1, coupon: maybe, lines: [1, 'a', null] },
        delay: 5,
      }),
      this.timers.schedule({ key: 'k', handler: 'h', payload: ['a', 'b'] as const, delay: 5 }),
      this.timers.scheduleMany([
        { key: 'a', handler: 'h', payload: { a: 1 }, delay: 5 },
        { key: 'b', handler: 'h', payload: 'b', delay: 5 },
        { key: 'c', handler: 'h', delay: 5 },
      ]),
    ]);
  }

  @OnTimer('remind')
  async remind(payload: Remind, ctx: TimerContext<Remind>): Promise<string> {
    return `${payload.userId} ${ctx.payload.channel.to ?? ''} ${ctx.key}`;
  }

  notJson(withDate: WithDate, withMethod: WithMethod, entity: Entity, anything: unknown) {
    const spec = { key: 'k', handler: 'h', delay: 5 } as const;
    return [
      // @ts-expect-error a Date does not survive JSON (it comes back a string): give date.getTime()
      this.timers.schedule({ ...spec, payload: withDate }),
      // @ts-expect-error a Date as the payload itself
      this.timers.schedule({ ...spec, payload: new Date() }),
      // @ts-expect-error an object with a method: JSON keeps no function
      this.timers.schedule({ ...spec, payload: withMethod }),
      // @ts-expect-error a class instance with methods
      this.timers.schedule({ ...spec, payload: entity }),
      // @ts-expect-error a function member
      this.timers.schedule({ ...spec, payload: { userId: 'u', run: () => 1 } }),
      // @ts-expect-error a bigint
      this.timers.schedule({ ...spec, payload: { n: 1n } }),
      // @ts-expect-error a symbol
      this.timers.schedule({ ...spec, payload: { s: Symbol('s') } }),
      // @ts-expect-error an array's undefined would become null
      this.timers.schedule({ ...spec, payload: [1, undefined] }),
      // @ts-expect-error a Map (JSON writes {})
      this.timers.schedule({ ...spec, payload: new Map<string, string>() }),
      // @ts-expect-error a value of unknown type: check it is JSON first
      this.timers.schedule({ ...spec, payload: anything }),
      // @ts-expect-error in a batch too
      this.timers.scheduleMany([{ ...spec, payload: withDate }]),
      // @ts-expect-error and in a preview
      this.timers.preview({ ...spec, payload: withMethod }),
    ];
  }
}

// `handlers` maps (docs/spec.md §5.1): a typed handler compiles, one of a payload that is not JSON does not
const remind = (p: Remind, ctx: TimerContext<Remind>) => `${p.userId} ${ctx.key}`;
export const handlerMaps = () => [
  SundialWorkerModule.forRoot({
    handlers: { remind, inline: (p: Remind, ctx) => p.tags.length + ctx.runCount },
  }),
  SundialWorkerModule.forRoot({ handlers: { loose: (p, ctx) => ctx.key, json: (p: JsonValue) => p } }),
  SundialWorkerModule.forRoot(),
  SundialModule.forRoot({ backend: 'memory', handlers: { remind, unknown: (p: unknown) => p } }),
  SundialModule.forRoot({ connection: 'redis://127.0.0.1:6379' }),
  SundialTestingModule.forRoot({ handlers: { remind: (p: Remind, ctx) => ctx.payload.channel.to } }),
  SundialTestingModule.forRoot(),
  // @ts-expect-error a Date in the payload type (it comes back a string)
  SundialWorkerModule.forRoot({ handlers: { remind, dated: (p: WithDate) => p.at.getTime() } }),
  // @ts-expect-error a method in the payload type
  SundialModule.forRoot({ backend: 'memory', handlers: { sent: (p: WithMethod) => p.send() } }),
  // @ts-expect-error a class instance with methods
  SundialTestingModule.forRoot({ handlers: { load: (p: Entity) => p.load() } }),
  // @ts-expect-error not a function
  SundialWorkerModule.forRoot({ handlers: { remind: 'remind' } }),
];

// a map returned by a forRootAsync factory is checked the same way (it was typed TimerHandlerMap: any)
class Settings {
  get(key: string): number {
    return key.length;
  }
}
const dated = () => ({ handlers: { dated: (p: WithDate) => p.at } });
const sent = async () => ({ handlers: { sent: (p: WithMethod) => p } });
const load = () => ({ backend: 'memory' as const, handlers: { load: (p: Entity) => p } });
export const asyncHandlerMaps = () => [
  SundialWorkerModule.forRootAsync({ useFactory: () => ({ handlers: { remind } }) }),
  SundialWorkerModule.forRootAsync({ useFactory: async () => ({ handlers: { remind }, dispatch: true }) }),
  SundialWorkerModule.forRootAsync({
    inject: [Settings],
    useFactory: (s: Settings) => ({ concurrency: s.get('c') }),
  }),
  // the README's form: an untyped parameter of an injected provider (typed never[] before: did not compile)
  SundialWorkerModule.forRootAsync({ inject: [Settings], useFactory: (s) => ({ concurrency: s.get('c') }) }),
  SundialModule.forRootAsync({ useFactory: () => ({ backend: 'memory' as const, handlers: { remind } }) }),
  SundialModule.forRootAsync({ useFactory: async () => ({ connection: 'redis://127.0.0.1:6379' }) }),
  SundialModule.forRootAsync({
    inject: [Settings],
    useFactory: (s) => ({ connection: `redis://h:${s.get('p')}` }),
  }),
  // @ts-expect-error a Date in the payload type
  SundialWorkerModule.forRootAsync({ useFactory: dated }),
  // @ts-expect-error a method in the payload type, from an async factory
  SundialWorkerModule.forRootAsync({ useFactory: sent }),
  // @ts-expect-error a class instance with methods, memory backend
  SundialModule.forRootAsync({ useFactory: load }),
];

// a map returned by a useClass / useExisting options class is checked the same way (it was not checked)
class DatedWorkerOptions {
  createSundialWorkerOptions() {
    return { handlers: { dated: (p: WithDate) => p.at.getTime() } };
  }
}
class AsyncSentWorkerOptions {
  async createSundialWorkerOptions() {
    return { concurrency: 4, handlers: { sent: (p: WithMethod) => p } };
  }
}
class RemindWorkerOptions {
  createSundialWorkerOptions() {
    return { concurrency: 4, handlers: { remind } };
  }
}
class PlainWorkerOptions {
  createSundialWorkerOptions() {
    return { concurrency: 4 };
  }
}
export const classHandlerMaps = () => [
  SundialWorkerModule.forRootAsync({ useClass: RemindWorkerOptions }),
  SundialWorkerModule.forRootAsync({ useClass: PlainWorkerOptions }),
  SundialWorkerModule.forRootAsync({ useExisting: RemindWorkerOptions }),
  SundialWorkerModule.forRootAsync({ useExisting: 'WORKER_OPTIONS' }),
  // @ts-expect-error a Date in the payload type
  SundialWorkerModule.forRootAsync({ useClass: DatedWorkerOptions }),
  // @ts-expect-error a method in the payload type, from an async method
  SundialWorkerModule.forRootAsync({ useClass: AsyncSentWorkerOptions }),
  // @ts-expect-error the same through useExisting
  SundialWorkerModule.forRootAsync({ useExisting: DatedWorkerOptions }),
];

// and SundialModule's (Nest's options class, create()), memory backend
class LoadModuleOptions {
  create() {
    return { backend: 'memory' as const, handlers: { load: (p: Entity) => p.load() } };
  }
}
class RemindModuleOptions {
  async create() {
    return { backend: 'memory' as const, handlers: { remind } };
  }
}
class RedisModuleOptions {
  create() {
    return { connection: 'redis://127.0.0.1:6379' };
  }
}
export const moduleClassHandlerMaps = () => [
  SundialModule.forRootAsync({ useClass: RemindModuleOptions }),
  SundialModule.forRootAsync({ useClass: RedisModuleOptions }),
  SundialModule.forRootAsync({ useExisting: RedisModuleOptions }),
  // @ts-expect-error a class instance with methods
  SundialModule.forRootAsync({ useClass: LoadModuleOptions }),
  // @ts-expect-error the same through useExisting
  SundialModule.forRootAsync({ useExisting: LoadModuleOptions }),
];
