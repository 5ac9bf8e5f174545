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
