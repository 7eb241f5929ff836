import os from 'node:os';
import type { LogLevelName } from '../settings/schema.js';

// Serilog output templates (`[{Timestamp:HH:mm:ss} {Level:u3}] {Message:lj}{NewLine}{Exception}`),
// compiled once per sink into a function, so that a log line costs string concatenation only.

export interface LogEvent {
  time: Date;
  level: LogLevelName;
  message: string;
  /** Logger label (module id or area, `wwwroot`, `http`): Serilog's SourceContext. */
  label?: string;
  meta?: Record<string, unknown>;
  error?: Error;
}

export type Render = (event: LogEvent) => string;

/**
 * The process a line comes from (docs/logging.md "Which worker"): its pid, and under
 * `ack serve --workers` the worker id the primary gave it. A property of every line.
 */
export interface WorkerIdentity {
  ProcessId: number;
  WorkerId?: number;
}

const SHORT: Record<LogLevelName, string> = {
  Verbose: 'VRB',
  Debug: 'DBG',
  Information: 'INF',
  Warning: 'WRN',
  Error: 'ERR',
  Fatal: 'FTL',
};

/** Serilog's default Timestamp format when a template gives none. */
const DEFAULT_TIME_FORMAT = 'yyyy-MM-dd HH:mm:ss.fff zzz';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** .NET custom date and time format (yyyy yy MM M dd d HH H hh h mm m ss s f.. zzz zz z tt, 'literal', \c). */
export function compileTimeFormat(format: string): (d: Date) => string {
  const parts: ((d: Date) => string)[] = [];
  const token = /y+|M+|d+|H+|h+|m+|s+|f+|F+|z+|t+|'[^']*'|"[^"]*"|\\.|[^yMdHhmsfFzt'"\\]+/g;
  for (const [t] of format.matchAll(token)) {
    const c = t[0]!;
    const n = t.length;
    switch (c) {
      case 'y':
        parts.push(n <= 2 ? (d) => pad(d.getFullYear() % 100, n) : (d) => pad(d.getFullYear(), n));
        break;
      case 'M':
        parts.push((d) => pad(d.getMonth() + 1, Math.min(n, 2)));
        break;
      case 'd':
        parts.push((d) => pad(d.getDate(), Math.min(n, 2)));
        break;
      case 'H':
        parts.push((d) => pad(d.getHours(), Math.min(n, 2)));
        break;
      case 'h':
        parts.push((d) => pad(d.getHours() % 12 || 12, Math.min(n, 2)));
        break;
      case 'm':
        parts.push((d) => pad(d.getMinutes(), Math.min(n, 2)));
        break;
      case 's':
        parts.push((d) => pad(d.getSeconds(), Math.min(n, 2)));
        break;
      case 'f':
      case 'F':
        parts.push((d) => pad(d.getMilliseconds(), 3).padEnd(n, '0').slice(0, n));
        break;
      case 'z':
        parts.push((d) => {
          const off = -d.getTimezoneOffset();
          const sign = off < 0 ? '-' : '+';
          const h = Math.floor(Math.abs(off) / 60);
          if (n === 1) return `${sign}${h}`;
          if (n === 2) return `${sign}${pad(h, 2)}`;
          return `${sign}${pad(h, 2)}:${pad(Math.abs(off) % 60, 2)}`;
        });
        break;
      case 't':
        parts.push((d) => (d.getHours() < 12 ? 'AM' : 'PM').slice(0, n === 1 ? 1 : 2));
        break;
      case "'":
      case '"':
        parts.push(() => t.slice(1, -1));
        break;
      case '\\':
        parts.push(() => t.slice(1));
        break;
      default:
        parts.push(() => t);
    }
  }
  return (d) => parts.map((p) => p(d)).join('');
}

function formatLevel(level: LogLevelName, format: string | undefined): string {
  if (!format) return level;
  const m = /^([uwt])(\d*)$/.exec(format);
  if (!m) return level;
  const width = m[2] ? Number(m[2]) : undefined;
  let text: string = width === 3 ? SHORT[level] : width !== undefined ? level.slice(0, width) : level;
  if (m[1] === 'u') text = text.toUpperCase();
  else if (m[1] === 'w') text = text.toLowerCase();
  else text = text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
  return text;
}

function renderValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Error) return JSON.stringify(v.message);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * The properties of a line, in the order every formatter writes them: the logger label, what the
 * caller gave, then the worker. Extra properties (a trace id) are added here, once, for every sink.
 */
export function eventProperties(event: LogEvent, worker: WorkerIdentity | undefined): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  if (event.label) props.SourceContext = event.label;
  if (event.meta) Object.assign(props, event.meta);
  if (worker) {
    props.ProcessId = worker.ProcessId;
    if (worker.WorkerId !== undefined) props.WorkerId = worker.WorkerId;
  }
  return props;
}

function renderProperties(event: LogEvent, json: boolean, worker: WorkerIdentity | undefined): string {
  const props = eventProperties(event, worker);
  if (json) return renderValue(props);
  const entries = Object.entries(props).map(([k, v]) => `${k}: ${renderValue(v)}`);
  return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
}

export function renderException(error: Error | undefined): string {
  if (!error) return '';
  let text = error.stack ?? `${error.name}: ${error.message}`;
  let cause = error.cause;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    text += `${os.EOL} ---> ${cause.stack ?? `${cause.name}: ${cause.message}`}`;
    cause = cause.cause;
  }
  return text + os.EOL;
}

/**
 * A message is one log line: line breaks and other control characters (often from request input,
 * e.g. an uploaded file's path) are shown escaped, so that no caller can forge a second log line.
 */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Compiles an output template. Tokens: `{Timestamp[:format]}`, `{Level[:u3|w3|t3|u|w]}`,
 * `{Message[:lj|l|j]}`, `{NewLine}`, `{Exception}`, `{Properties[:j]}`, `{SourceContext}`, `{Module}`, any meta
 * property by name; `{Name,-5}` alignment; `{{` and `}}` for braces. When the template has no
 * `{Properties}`, meta given to the logger is appended to the message so that it is not lost.
 * `clean` hides secrets in the message and the exception text. With `worker`, `{ProcessId}` and
 * `{WorkerId}` name it, and a worker of `ack serve --workers` whose template names neither has
 * ` [worker 2 pid 1234]` after the message, so that every line says which process wrote it.
 */
export function compileTemplate(
  template: string,
  clean: (text: string) => string = (t) => t,
  worker?: WorkerIdentity,
): Render {
  const showsProperties = /\{Properties[:,}]/.test(template);
  const workerMark =
    worker?.WorkerId !== undefined && !/\{(ProcessId|WorkerId)[:,}]/.test(template)
      ? ` [worker ${worker.WorkerId} pid ${worker.ProcessId}]`
      : '';
  const parts: Render[] = [];
  const token = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?:,(-?\d+))?(?::([^}]*))?\}|[^{}]+|[{}]/g;
  for (const m of template.matchAll(token)) {
    const [whole, name, align, format] = m;
    let part: Render;
    if (whole === '{{') part = () => '{';
    else if (whole === '}}') part = () => '}';
    else if (!name) part = () => whole;
    else {
      switch (name) {
        case 'Timestamp': {
          const fmt = compileTimeFormat(format ?? DEFAULT_TIME_FORMAT);
          part = (e) => fmt(e.time);
          break;
        }
        case 'Level':
          part = (e) => formatLevel(e.level, format);
          break;
        case 'Message':
          part = (e) => {
            const text = oneLine(clean(e.message));
            if (showsProperties || !e.meta) return text + workerMark;
            const extra = Object.keys(e.meta).length > 0 ? ` ${renderValue(e.meta)}` : '';
            return (extra ? text + oneLine(clean(extra)) : text) + workerMark;
          };
          break;
        case 'NewLine':
          part = () => os.EOL;
          break;
        case 'Exception':
          part = (e) => (e.error ? clean(renderException(e.error)) : '');
          break;
        case 'Properties':
          part = (e) => clean(renderProperties(e, format === 'j', worker));
          break;
        case 'SourceContext':
          part = (e) => e.label ?? '';
          break;
        case 'Module':
          // The label, or `host` for the host's own lines: a console column that is never empty.
          part = (e) => e.label ?? 'host';
          break;
        case 'ProcessId':
          part = () => (worker ? String(worker.ProcessId) : String(process.pid));
          break;
        case 'WorkerId':
          part = () => (worker?.WorkerId !== undefined ? String(worker.WorkerId) : '');
          break;
        default:
          part = (e) => {
            const v = e.meta?.[name];
            return v === undefined ? '' : clean(typeof v === 'string' ? v : renderValue(v));
          };
      }
      if (align) {
        const width = Number(align);
        const inner = part;
        part = width < 0 ? (e) => inner(e).padEnd(-width) : (e) => inner(e).padStart(width);
      }
    }
    parts.push(part);
  }
  return (event) => {
    let out = '';
    for (const p of parts) out += p(event);
    return out;
  };
}
