import { Writable } from 'node:stream';
import { createPino, parseLogLevel, sundialLogger } from './pino-logger';

/** A pino at `level` whose lines are parsed into `lines`. */
function capture(level: Parameters<typeof parseLogLevel>[0]) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { pino: createPino(parseLogLevel(level), sink), lines };
}

describe('the apps’ pino logger', () => {
  it('writes one JSON object per line: level by name, ISO time, msg, and the timer fields', () => {
    const { pino, lines } = capture('info');
    const logger = sundialLogger(pino);
    logger.warn('run failed', { key: 'invoice:42', id: '7p0', version: 3, partition: 1, handler: 'mail' });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'run failed',
        key: 'invoice:42',
        id: '7p0',
        version: 3,
        partition: 1,
        handler: 'mail',
      }),
    ]);
    expect(new Date(lines[0].time as string).toISOString()).toBe(lines[0].time);
  });

  it('drops lines below LOG_LEVEL', () => {
    const { pino, lines } = capture('warn');
    const logger = sundialLogger(pino);
    logger.info('hello');
    logger.debug('details');
    logger.error('careful');
    expect(lines.map((line) => line.msg)).toEqual(['careful']);
  });

  it('redacts the Authorization header and cookies of a request line', () => {
    const { pino, lines } = capture('info');
    pino.info(
      { req: { method: 'POST', headers: { authorization: 'Bearer s3cret', cookie: 'a=b' } } },
      'done',
    );
    expect(lines[0].req).toEqual({
      method: 'POST',
      headers: { authorization: '[redacted]', cookie: '[redacted]' },
    });
  });

  it('refuses an unknown LOG_LEVEL and reads Nest’s "log" and "verbose"', () => {
    expect(parseLogLevel('log')).toBe('info');
    expect(parseLogLevel('verbose')).toBe('trace');
    expect(parseLogLevel(undefined)).toBe('info');
    expect(parseLogLevel(' DEBUG ')).toBe('debug');
    expect(() => parseLogLevel('loud')).toThrow(
      /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace/,
    );
  });

  it('reads an empty or blank LOG_LEVEL as the default, as every variable (docs/spec.md §5.4)', () => {
    expect(parseLogLevel('')).toBe('info');
    expect(parseLogLevel('  ')).toBe('info');
  });
});

describe('errSaidOnce, the apps’ err serializer', () => {
  it('says a cause the error’s message names already once (a start that waited for Redis in vain)', () => {
    const { pino, lines } = capture('info');
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6390');
    const timeout = new Error(`Redis did not answer within 30000 ms at start: ${refused.message}`, {
      cause: refused,
    });
    pino.fatal({ err: timeout }, 'sundial-worker could not start');
    expect((lines[0].err as { message: string }).message).toBe(
      'Redis did not answer within 30000 ms at start: connect ECONNREFUSED 127.0.0.1:6390',
    );
  });

  it('still appends a cause the message does not name, as pino does', () => {
    const { pino, lines } = capture('info');
    const inner = new Error('EACCES');
    const outer = new Error('could not read the file', { cause: new Error('open failed', { cause: inner }) });
    pino.error({ err: outer }, 'x');
    expect(lines[0].err).toMatchObject({
      message: 'could not read the file: open failed: EACCES',
      type: 'Error',
    });
  });
});
