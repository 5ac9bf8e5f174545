import { JsonLogger, parseLogLevel } from './json-logger';

describe('JsonLogger', () => {
  function capture(threshold: Parameters<typeof parseLogLevel>[0]) {
    const lines: Record<string, unknown>[] = [];
    const logger = new JsonLogger(parseLogLevel(threshold), (line) => lines.push(JSON.parse(line)));
    return { logger, lines };
  }

  it('writes one JSON object per line with level, msg and the timer fields', () => {
    const { logger, lines } = capture('info');
    logger.log({ msg: 'run ok', key: 'invoice:42', id: '7p0', version: 3 }, 'Runner');
    logger.warn('keep ignored a new time', { key: 'a', id: '1p0', version: 1 });
    expect(lines).toEqual([
      {
        time: expect.any(String),
        level: 'info',
        msg: 'run ok',
        key: 'invoice:42',
        id: '7p0',
        version: 3,
        context: 'Runner',
      },
      {
        time: expect.any(String),
        level: 'warn',
        msg: 'keep ignored a new time',
        key: 'a',
        id: '1p0',
        version: 1,
      },
    ]);
  });

  it("reads Nest's (message, stack, context) error calls", () => {
    const { logger, lines } = capture('info');
    logger.error('boom', 'Error: boom\n    at somewhere (file.js:1:1)', 'ExceptionsHandler');
    expect(lines[0]).toMatchObject({
      level: 'error',
      msg: 'boom',
      context: 'ExceptionsHandler',
      stack: expect.stringContaining('at somewhere'),
    });
  });

  it('drops lines below LOG_LEVEL, and start-up chatter below debug', () => {
    const { logger, lines } = capture('warn');
    logger.log('hello');
    logger.debug('details');
    logger.warn('careful');
    const info = capture('info');
    info.logger.log('Mapped {/v1/timers, POST} route', 'RouterExplorer');
    expect(lines.map((line) => line.msg)).toEqual(['careful']);
    expect(info.lines).toEqual([]);
  });

  it('refuses an unknown LOG_LEVEL and accepts Nest’s "log"', () => {
    expect(parseLogLevel('log')).toBe('info');
    expect(parseLogLevel(undefined)).toBe('info');
    expect(() => parseLogLevel('loud')).toThrow(/LOG_LEVEL/);
  });
});
