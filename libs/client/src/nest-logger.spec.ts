import { Writable } from 'node:stream';
import { ConsoleLogger, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Logger as PinoNestLogger, PinoLogger } from 'nestjs-pino';
import pino from 'pino';
import { type LogFields, logsDebug, silentLogger, type SundialLogger, VirtualClock } from '@sundial/core';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { nestSundialLogger, SundialModule, SundialWorkerModule, Timers } from './index';

/** A Nest logger that records what it is given: [level, message, ...params]. */
class RecordingLogger implements LoggerService {
  readonly lines: [string, ...unknown[]][] = [];
  log = (...args: unknown[]) => void this.lines.push(['log', ...args]);
  error = (...args: unknown[]) => void this.lines.push(['error', ...args]);
  warn = (...args: unknown[]) => void this.lines.push(['warn', ...args]);
  debug = (...args: unknown[]) => void this.lines.push(['debug', ...args]);
  verbose = (...args: unknown[]) => void this.lines.push(['verbose', ...args]);

  /** The lines of context 'Sundial' (Nest's Logger passes the context last). */
  sundial(): [string, unknown][] {
    return this.lines.filter((line) => line.at(-1) === 'Sundial').map(([level, message]) => [level, message]);
  }
}

/** A line of the in-memory engine: the second schedule of a key with ifExists 'keep' and another time. */
async function keepWarning(timers: Timers): Promise<void> {
  await timers.schedule({ key: 'trial:acme', handler: 'trial.end', delay: '14d' });
  await timers.schedule({ key: 'trial:acme', handler: 'trial.end', delay: '7d', ifExists: 'keep' });
}

const KEEP_LINE = {
  msg: 'ifExists keep: the key already exists, so the requested time is ignored',
  key: 'trial:acme',
  version: 1,
  status: 'pending',
  recorded: 'delay 1209600000 ms',
  requested: 'delay 604800000 ms',
};

describe("SundialModule's default logger: Sundial's lines through Nest's Logger", () => {
  const memory = { backend: 'memory' as const, handlers: { 'trial.end': () => undefined } };

  it("a test module's setLogger receives the engine's line, its fields as properties of the message", async () => {
    const nest = new RecordingLogger();
    const moduleRef = await Test.createTestingModule({ imports: [SundialModule.forRoot(memory)] })
      .setLogger(nest)
      .compile();
    const logged = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    await keepWarning(moduleRef.get(Timers));
    await moduleRef.close();
    expect(nest.sundial()).toEqual([['warn', expect.objectContaining(KEEP_LINE)]]);
    // not a JSON line of consoleLogger beside Nest's
    expect(logged).not.toHaveBeenCalled();
    logged.mockRestore();
  });

  it("drops Sundial's debug lines (one a run) unless asked for them, so none is even built", async () => {
    const nest = new RecordingLogger();
    const run = async (logger?: SundialLogger) => {
      const clock = new VirtualClock(0);
      const moduleRef = await Test.createTestingModule({
        imports: [SundialModule.forRoot({ ...memory, clock, ...(logger && { logger }) })],
      })
        .setLogger(nest)
        .compile();
      const timers = moduleRef.get(Timers);
      await timers.schedule({ key: 'k', handler: 'trial.end', delay: 10 });
      // a stale wake (the engine's debug line) and a run
      await timers.reschedule('k', { delay: 20 });
      await clock.advance(20);
      await moduleRef.close();
    };
    expect(logsDebug(nestSundialLogger())).toBe(false);
    await run();
    expect(nest.sundial().filter(([level]) => level === 'debug')).toEqual([]);
    expect(logsDebug(nestSundialLogger({ debug: true }))).toBe(true);
  });

  it("an application's useLogger receives it too", async () => {
    const app = await NestFactory.createApplicationContext(SundialModule.forRoot(memory), { logger: false });
    const nest = new RecordingLogger();
    app.useLogger(nest);
    await keepWarning(app.get(Timers));
    await app.close();
    expect(nest.sundial()).toEqual([['warn', expect.objectContaining(KEEP_LINE)]]);
  });

  it('the logger option still takes them instead', async () => {
    const lines: [string, LogFields | undefined][] = [];
    const own: SundialLogger = {
      ...silentLogger,
      warn: (message, fields) => void lines.push([message, fields]),
    };
    const nest = new RecordingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ ...memory, logger: own })],
    })
      .setLogger(nest)
      .compile();
    await keepWarning(moduleRef.get(Timers));
    await moduleRef.close();
    expect(nest.sundial()).toEqual([]);
    const { msg, ...fields } = KEEP_LINE;
    expect(lines).toEqual([[msg, expect.objectContaining(fields)]]);
  });

  it("Nest's ConsoleLogger prints the message first and the fields after it, on one line", async () => {
    const printed: string[] = [];
    const console = new ConsoleLogger({ colors: false });
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      const moduleRef = await Test.createTestingModule({ imports: [SundialModule.forRoot(memory)] })
        .setLogger(console)
        .compile();
      await keepWarning(moduleRef.get(Timers));
      await moduleRef.close();
    } finally {
      write.mockRestore();
    }
    const line = printed.filter((text) => text.includes('[Sundial]'));
    expect(line).toHaveLength(1);
    expect(line[0]).toMatch(
      /WARN \[Sundial\] ifExists keep: the key already exists, so the requested time is ignored \{ key: 'trial:acme', id: '\d+', version: 1, status: 'pending', recorded: .*, requested: .* \}\n$/,
    );
  });

  it('nestjs-pino writes one JSON line: context, msg and the fields at its top level', async () => {
    const written: string[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => done(void written.push(String(chunk))) });
    const params = { pinoHttp: { logger: pino(sink) } };
    const moduleRef = await Test.createTestingModule({ imports: [SundialModule.forRoot(memory)] })
      .setLogger(new PinoNestLogger(new PinoLogger(params), params))
      .compile();
    await keepWarning(moduleRef.get(Timers));
    await moduleRef.close();
    const lines = written.map((line) => JSON.parse(line)).filter((line) => line.context === 'Sundial');
    expect(lines).toEqual([expect.objectContaining({ level: 40, ...KEEP_LINE, id: expect.any(String) })]);
  });

  describe('on Redis', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it("SundialWorkerModule's runner: a run failed line with the run's fields", async () => {
      const nest = new RecordingLogger();
      const app = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: redis.url, prefix: 'nestlog' }),
          SundialWorkerModule.forRoot({
            prefix: 'nestlog',
            dispatch: true,
            handlers: {
              'invoice.send': () => {
                throw new Error('smtp down');
              },
            },
          }),
        ],
      })
        .setLogger(nest)
        .compile();
      await app.init();
      const timer = await app.get(Timers).schedule({ key: 'invoice:9', handler: 'invoice.send', delay: 50 });
      const failed = () => nest.sundial().find(([, line]) => (line as { msg?: string }).msg === 'run failed');
      const [level, line] = await waitFor(failed, { what: 'the run failed line' });
      await app.close();
      expect(level).toBe('warn');
      expect(line).toMatchObject({ key: 'invoice:9', id: timer.id, version: 1, handler: 'invoice.send' });
      expect(JSON.stringify(line)).toContain('smtp down');
    });
  });
});
