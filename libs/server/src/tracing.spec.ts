import { tracingConfigured } from './tracing';

describe('tracingConfigured (off unless the OTEL_* variables ask for traces)', () => {
  it('is off with no OTEL_* variable', () => {
    expect(tracingConfigured({})).toBe(false);
  });

  it('is on with an OTLP endpoint, for all signals or for traces', () => {
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://tempo:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/v1/traces' })).toBe(
      true,
    );
  });

  it('follows an explicit OTEL_TRACES_EXPORTER', () => {
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(
      tracingConfigured({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }),
    ).toBe(false);
  });

  it('is off when OTEL_SDK_DISABLED=true, and blank values count as unset', () => {
    expect(
      tracingConfigured({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }),
    ).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ', OTEL_TRACES_EXPORTER: '' })).toBe(false);
  });
});
