import type { LogEvent, Render } from './template.js';
import { renderException } from './template.js';

// Serilog's JSON formatters, chosen by a sink's `Args:formatter` (docs/logging.md "JSON lines"):
// one JSON object per line, whatever the message holds (JSON.stringify escapes line breaks).

export type JsonFormatterName = 'compact' | 'rendered-compact' | 'json';

/** The formatter type names Serilog's configuration reader takes, by the part before the assembly. */
const KNOWN: Record<string, JsonFormatterName> = {
  'serilog.formatting.compact.compactjsonformatter': 'compact',
  'serilog.formatting.compact.renderedcompactjsonformatter': 'rendered-compact',
  'serilog.formatting.json.jsonformatter': 'json',
};

/**
 * The formatter a sink's `Args:formatter` names: a .NET type name (`Namespace.Type, Assembly`), as
 * a string or as `{ "type": ... }`. `undefined` when none is given; `unknown` (with the name, for the
 * warning) when it names one this host does not have.
 */
export function resolveFormatter(
  value: unknown,
): { kind: 'none' } | { kind: 'known'; name: JsonFormatterName } | { kind: 'unknown'; text: string } {
  if (value === undefined || value === null || value === '') return { kind: 'none' };
  const raw =
    typeof value === 'string'
      ? value
      : typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string'
        ? (value as { type: string }).type
        : JSON.stringify(value);
  const typeName = raw.split(',')[0]!.trim().toLowerCase();
  const name = KNOWN[typeName];
  return name ? { kind: 'known', name } : { kind: 'unknown', text: raw.slice(0, 200) };
}

/** A property name as Serilog's compact format writes it: a leading `@` is doubled, so it is not a field. */
const compactName = (name: string) => (name.startsWith('@') ? `@${name}` : name);

/**
 * The message as a message template: this host's messages are plain text, so a brace is written
 * doubled, and a reader rendering `@mt` shows it as it was, not as a property hole.
 */
const asTemplate = (message: string) => message.replace(/[{}]/g, (c) => c + c);

/** Serilog's event id (`@i`): a 32-bit hash of the template, as 8 hex digits (FNV-1a here). */
function eventId(template: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < template.length; i++) {
    h ^= template.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * A property value as JSON carries it, with secrets hidden in every string (before it is quoted:
 * the redaction works on text, not on JSON): an error as its message, a bigint as a string, what
 * cannot be written (a cycle, a function) as its text or left out.
 */
function jsonSafe(value: unknown, clean: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return clean(value);
  if (value instanceof Error) return clean(value.message);
  if (typeof value === 'bigint') return value.toString();
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8) return clean(String(value));
  if (Array.isArray(value)) return value.map((v) => jsonSafe(v, clean, depth + 1) ?? null);
  const out: Record<string, unknown> = {};
  try {
    const plain = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    if (plain === null || typeof plain !== 'object') return plain;
    for (const [k, v] of Object.entries(plain)) out[k] = jsonSafe(v, clean, depth + 1);
  } catch {
    return clean(String(value));
  }
  return out;
}

/**
 * Compiles one JSON formatter. `properties` gives the event's properties (SourceContext, the
 * logger's meta, the worker, and what enrichers add later); `clean` hides secrets in the text.
 */
export function compileJsonFormatter(
  name: JsonFormatterName,
  properties: (event: LogEvent) => Record<string, unknown>,
  clean: (text: string) => string,
): Render {
  const line = (record: Record<string, unknown>) => JSON.stringify(record) + '\n';
  if (name === 'json') {
    return (event) => {
      const message = clean(event.message);
      const props: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(properties(event))) {
        const safe = jsonSafe(v, clean);
        if (safe !== undefined) props[k] = safe;
      }
      const record: Record<string, unknown> = {
        Timestamp: event.time.toISOString(),
        Level: event.level,
        MessageTemplate: asTemplate(message),
        RenderedMessage: message,
        Properties: props,
      };
      if (event.error) record.Exception = clean(renderException(event.error)).trimEnd();
      return line(record);
    };
  }
  const rendered = name === 'rendered-compact';
  return (event) => {
    const message = clean(event.message);
    const template = asTemplate(message);
    const record: Record<string, unknown> = { '@t': event.time.toISOString() };
    if (rendered) {
      record['@m'] = message;
      record['@i'] = eventId(template);
    } else record['@mt'] = template;
    // Serilog leaves the level out for Information, its default.
    if (event.level !== 'Information') record['@l'] = event.level;
    if (event.error) record['@x'] = clean(renderException(event.error)).trimEnd();
    for (const [k, v] of Object.entries(properties(event))) {
      const safe = jsonSafe(v, clean);
      if (safe !== undefined) record[compactName(k)] = safe;
    }
    return line(record);
  };
}
