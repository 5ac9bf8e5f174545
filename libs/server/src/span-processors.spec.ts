import type { SundialLogger } from '@sundial/core';
import { spanProcessorsFromEnv } from './span-processors';

/** The warn lines `spanProcessorsFromEnv` writes for `env`; the processors are shut down. */
async function warnings(env: NodeJS.ProcessEnv): Promise<unknown[][]> {
  const warn = jest.fn();
  const logger: SundialLogger = { warn, error: jest.fn(), info: jest.fn(), debug: jest.fn() };
  const processors = spanProcessorsFromEnv(env, logger);
  await Promise.all(processors.map((processor) => processor.shutdown()));
  return warn.mock.calls;
}

/**
 * docs/spec.md §5.4: OTEL_EXPORTER_OTLP_PROTOCOL is `http/protobuf`, `http/json` or `grpc`. Another value
 * (a typo, `http`, `gRPC`) was sent as http/protobuf without a word, like an unknown exporter's name is
 * not: now a warn at start naming the variable and what to write.
 */
describe('OTEL_EXPORTER_OTLP_PROTOCOL', () => {
  const endpoint = 'http://127.0.0.1:1';

  it.each(['', 'http/protobuf', 'http/json', 'grpc'])('%j is taken without a word', async (protocol) => {
    expect(
      await warnings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }),
    ).toEqual([]);
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'gRPC'],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'http'],
  ])('%s=%s is said at start, and http/protobuf used', async (variable, protocol) => {
    expect(await warnings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, [variable]: protocol })).toEqual([
      [
        `${variable} names '${protocol}', which this app does not have: http/protobuf is used`,
        { fix: 'Use http/protobuf or http/json (port 4318) or grpc (port 4317).' },
      ],
    ]);
  });
});

/**
 * docs/spec.md §5.4: OTEL_BSP_* are whole numbers from 1 (the two durations at most 2^31−1 ms, Node's
 * longest timer). Another value was dropped without a word (or, 0, taken: every span dropped, or an
 * endless flush): now a warn at start naming the variable, its value and the fix, and the SDK's
 * default used, which the processor is seen to hold.
 */
describe('OTEL_BSP_*', () => {
  const endpoint = 'http://127.0.0.1:1';
  const fields = {
    OTEL_BSP_MAX_QUEUE_SIZE: ['_maxQueueSize', 2048, 'from 1'],
    OTEL_BSP_SCHEDULE_DELAY: ['_scheduledDelayMillis', 5000, 'ms from 1 to 2147483647'],
    OTEL_BSP_EXPORT_TIMEOUT: ['_exportTimeoutMillis', 30000, 'ms from 1 to 2147483647'],
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ['_maxExportBatchSize', 512, 'from 1'],
  } as const;

  /** The batch processor's setting `field` for `env`, and the warn lines. */
  async function made(env: NodeJS.ProcessEnv, field: string): Promise<[unknown, unknown[][]]> {
    const warn = jest.fn();
    const logger: SundialLogger = { warn, error: jest.fn(), info: jest.fn(), debug: jest.fn() };
    const [processor] = spanProcessorsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env }, logger);
    const setting = (processor as unknown as Record<string, unknown>)[field];
    await processor.shutdown();
    return [setting, warn.mock.calls];
  }

  it.each(Object.keys(fields))('%s: a whole number is taken without a word', async (name) => {
    const [field] = fields[name as keyof typeof fields];
    expect(await made({ [name]: ' 300 ' }, field)).toEqual([300, []]);
  });

  it.each(
    Object.keys(fields).flatMap((name) =>
      ['0', '-5', '5s', '1.5', 'abc', ...(name.endsWith('DELAY') ? ['2147483648'] : [])].map((value) => [
        name,
        value,
      ]),
    ),
  )('%s=%s is said at start, and the default used', async (name, value) => {
    const [field, fallback, range] = fields[name as keyof typeof fields];
    expect(await made({ [name]: value }, field)).toEqual([
      fallback,
      [
        [
          `${name} is '${value}', not a whole number ${range}: the default ${fallback} is used`,
          { fix: `Write ${name} as a whole number ${range}, e.g. ${fallback}, or unset it for the default.` },
        ],
      ],
    ]);
  });
});
