import { describe, expect, it } from 'vitest';
import { tracesWanted } from './traces-wanted.js';

// When the OTEL_* variables turn span export on (docs/operations.md "Traces"): each case beside
// its nearest neighbour that decides the other way.
describe('tracesWanted', () => {
  it('is off with no variable, on with an OTLP endpoint alone', () => {
    expect(tracesWanted({}).on).toBe(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      on: true,
      endpoint: 'http://c:4318/v1/traces',
      notes: [],
    });
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/x' }).endpoint).toBe('http://c:4318/x');
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }).on).toBe(false);
  });

  it('follows OTEL_TRACES_EXPORTER: otlp on, none off even with an endpoint', () => {
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({
      on: true,
      endpoint: 'http://localhost:4318/v1/traces',
      notes: [],
    });
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).on).toBe(false);
    const both = tracesWanted({ OTEL_TRACES_EXPORTER: 'console, otlp' });
    expect(both.on).toBe(true);
    expect(both.notes).toEqual([expect.stringContaining('console')]);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).on).toBe(
      false,
    );
  });

  it('OTEL_SDK_DISABLED=true turns it off; false does not', () => {
    expect(tracesWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }).on).toBe(false);
    expect(tracesWanted({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).on).toBe(true);
  });

  it('says when the protocol asked for is not what is sent', () => {
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).notes).toEqual([
      expect.stringContaining('"grpc" is not supported'),
    ]);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).notes).toEqual(
      [],
    );
  });
});
