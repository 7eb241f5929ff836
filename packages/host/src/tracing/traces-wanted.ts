// Whether the standard OpenTelemetry variables ask for trace export (docs/operations.md "Traces").
// Off unless they do: an OTLP exporter named in OTEL_TRACES_EXPORTER, or, with that variable
// unset, an OTLP endpoint given.

export interface TracesWanted {
  on: boolean;
  /** Where spans go, for the start-up line. */
  endpoint: string;
  /** What the variables ask for that this host does not do. */
  notes: string[];
}

const DEFAULT_ENDPOINT = 'http://localhost:4318/v1/traces';

export function tracesWanted(env: NodeJS.ProcessEnv): TracesWanted {
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const notes: string[] = [];
  const traceEndpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  const endpoint =
    traceEndpoint ?? (baseEndpoint ? `${baseEndpoint.replace(/\/+$/, '')}/v1/traces` : undefined) ?? DEFAULT_ENDPOINT;
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { on: false, endpoint, notes };
  const exporters = (value('OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  let on: boolean;
  if (exporters.length === 0) on = traceEndpoint !== undefined || baseEndpoint !== undefined;
  else if (exporters.includes('none')) on = false;
  else {
    on = exporters.includes('otlp');
    const others = exporters.filter((e) => e !== 'otlp');
    if (others.length > 0)
      notes.push(`OTEL_TRACES_EXPORTER names ${others.join(', ')}; only otlp is supported, the others are ignored`);
  }
  const protocol = value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value('OTEL_EXPORTER_OTLP_PROTOCOL');
  if (on && protocol !== undefined && protocol !== 'http/json' && protocol !== 'http/protobuf')
    notes.push(`OTLP protocol "${protocol}" is not supported; spans are sent as http/json to ${endpoint}`);
  return { on, endpoint, notes };
}
