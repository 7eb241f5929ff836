import { toJSONSchema, type z } from 'zod';

// A small reader of the settings schema's shape, so that the one zod schema also drives what zod
// itself does not do: .NET-style case-insensitive keys, coercing environment strings to the type
// expected at a path, and saying in words what a key expects.

type Schema = z.ZodType;
interface Def {
  type: string;
  [key: string]: unknown;
}

// zod types each kind's definition separately; the walker reads them by name from the schema's
// public `def`, as a shallow copy in a plain record (the settings schema is walked at start only).
const defOf = (s: Schema): Def => ({ ...s.def });

export interface Unwrapped {
  /** The schema with defaults, optionality, nullability and transforms taken off. */
  node: Schema;
  nullable: boolean;
  /** The default at this level (objects and arrays included), if any. */
  defaultValue?: unknown;
}

export function unwrap(schema: Schema): Unwrapped {
  let node = schema;
  let nullable = false;
  let defaultValue: unknown;
  for (;;) {
    const def = defOf(node);
    if (def.type === 'default' || def.type === 'prefault') {
      if (defaultValue === undefined) {
        const d = def.defaultValue;
        defaultValue = typeof d === 'function' ? (d as () => unknown)() : d;
      }
      node = def.innerType as Schema;
    } else if (def.type === 'optional') node = def.innerType as Schema;
    else if (def.type === 'nullable') {
      nullable = true;
      node = def.innerType as Schema;
    } else if (def.type === 'pipe') node = def.in as Schema;
    else break;
  }
  return { node, nullable, defaultValue: structuredCloneIfObject(defaultValue) };
}

function structuredCloneIfObject(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? structuredClone(v) : v;
}

export type Kind = 'boolean' | 'number' | 'string' | 'enum' | 'object' | 'record' | 'array' | 'union' | 'unknown';

export function kindOf(schema: Schema): Kind {
  const t = defOf(unwrap(schema).node).type;
  switch (t) {
    case 'boolean':
    case 'number':
    case 'string':
    case 'enum':
    case 'object':
    case 'record':
    case 'array':
    case 'union':
      return t;
    default:
      return 'unknown';
  }
}

function shapeOf(node: Schema): Record<string, Schema> | undefined {
  const def = defOf(node);
  return def.type === 'object' ? (def.shape as Record<string, Schema>) : undefined;
}

export function unionOptions(schema: Schema): Schema[] {
  const def = defOf(unwrap(schema).node);
  return def.type === 'union' ? (def.options as Schema[]) : [];
}

export function enumValues(schema: Schema): string[] {
  const def = defOf(unwrap(schema).node);
  return def.type === 'enum' ? Object.values(def.entries as Record<string, string>) : [];
}

/** The key as the schema spells it (`runningenvironment` → `RunningEnvironment`), else as given. */
export function canonicalKey(schema: Schema | undefined, key: string): string {
  const shape = schema && objectOption(schema);
  if (!shape) return key;
  if (key in shape) return key;
  const lower = key.toLowerCase();
  return Object.keys(shape).find((k) => k.toLowerCase() === lower) ?? key;
}

/** The keys an object schema (or the object option of a union) names; undefined when not an object. */
export function objectKeys(schema: Schema | undefined): string[] | undefined {
  const shape = schema && objectOption(schema);
  return shape ? Object.keys(shape) : undefined;
}

/** True when an object schema takes any key (a record, or an object with a typed catch-all). */
export function takesAnyKey(schema: Schema | undefined): boolean {
  if (!schema) return false;
  const { node } = unwrap(schema);
  const def = defOf(node);
  if (def.type === 'record') return true;
  const catchall = def.catchall as Schema | undefined;
  return def.type === 'object' && catchall !== undefined && defOf(catchall).type !== 'unknown';
}

/** The object branch of a schema (an object, or the object option of a union). */
function objectOption(schema: Schema): Record<string, Schema> | undefined {
  const { node } = unwrap(schema);
  const shape = shapeOf(node);
  if (shape) return shape;
  for (const option of unionOptions(node)) {
    const s = shapeOf(unwrap(option).node);
    if (s) return s;
  }
  return undefined;
}

/** The schema of `key` inside `schema` (object key, record value, array element); undefined when unknown. */
export function childSchema(schema: Schema | undefined, key: string | number): Schema | undefined {
  if (!schema) return undefined;
  const { node } = unwrap(schema);
  const def = defOf(node);
  if (def.type === 'array') return def.element as Schema;
  if (def.type === 'record') return def.valueType as Schema;
  const shape = objectOption(node);
  if (shape) {
    const k = canonicalKey(node, String(key));
    if (k in shape) return shape[k];
    const catchall = defOf(node).catchall as Schema | undefined;
    return catchall && defOf(catchall).type !== 'unknown' ? catchall : undefined;
  }
  if (def.type === 'union') {
    for (const option of def.options as Schema[]) {
      const child = childSchema(option, key);
      if (child) return child;
    }
  }
  return undefined;
}

/** The schema found by following `path` from `schema`. */
export function schemaAt(schema: Schema, path: readonly (string | number)[]): Schema | undefined {
  let node: Schema | undefined = schema;
  for (const seg of path) node = childSchema(node, seg);
  return node;
}

export interface CanonicalizeOptions {
  /** Match keys ignoring case and rewrite them to the schema's spelling, as .NET configuration does. Default true; `module.json` keys are matched exactly. */
  ignoreCase?: boolean;
}

/**
 * Rewrites keys to the schema's spelling and enum values to the schema's case, as .NET
 * configuration matches keys (and Serilog matches level names) ignoring case, and quoted booleans
 * and numbers to values. Works on parsed JSON; the last of two keys that differ only in case wins,
 * as in .NET.
 */
export function readAsDotNet(value: unknown, schema: Schema | undefined, options: CanonicalizeOptions = {}): unknown {
  if (!schema) return value;
  const ignoreCase = options.ignoreCase ?? true;
  const kind = kindOf(schema);
  if (typeof value === 'string' && (kind === 'enum' || kind === 'union')) {
    const options = kind === 'enum' ? [schema] : unionOptions(schema);
    for (const option of options) {
      const match = enumValues(option).find((v) => v.toLowerCase() === value.toLowerCase());
      if (match) return match;
    }
    return value;
  }
  // .NET configuration holds every value as text, so "true" and "60" in a JSON file mean true and 60
  // (docs/configuration.md). A number where text is expected stays an error: it is more often a
  // mistake than a choice.
  if (typeof value === 'string' && kind === 'boolean' && /^\s*(true|false)\s*$/i.test(value))
    return value.trim().toLowerCase() === 'true';
  if (typeof value === 'string' && kind === 'number' && NUMBER_TEXT.test(value.trim())) return Number(value.trim());
  if (Array.isArray(value)) {
    const element = childSchema(schema, 0);
    return value.map((v) => readAsDotNet(v, element, options));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const isRecord = kind === 'record';
    const known = objectKeys(schema);
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const k = isRecord || !ignoreCase ? key : canonicalKey(schema, key);
      // Keys matched exactly: a key in another case is not the schema's, so its value is left alone.
      const child =
        ignoreCase || isRecord || !known || known.includes(k) || takesAnyKey(schema)
          ? childSchema(schema, k)
          : undefined;
      out[k] = readAsDotNet(v, child, options);
    }
    return out;
  }
  return value;
}

/** A number as .NET parses one from text (sign, decimals, exponent). */
export const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

interface NumberBounds {
  integer: boolean;
  min?: { value: number; inclusive: boolean };
  max?: { value: number; inclusive: boolean };
}

// A number's bounds, read from zod's public JSON Schema of it. An integer (`.int()`) is a safe
// integer, so its JSON Schema also bounds it by +/-Number.MAX_SAFE_INTEGER: those bounds are zod's,
// not the setting's, and are left out.
function numberBounds(node: Schema): NumberBounds {
  const json = toJSONSchema(node, { unrepresentable: 'any' }) as Record<string, unknown>;
  const integer = json.type === 'integer';
  const bound = (inclusive: unknown, exclusive: unknown, safe: number) => {
    if (typeof exclusive === 'number') return { value: exclusive, inclusive: false };
    if (typeof inclusive === 'number' && !(integer && inclusive === safe)) return { value: inclusive, inclusive: true };
    return undefined;
  };
  const bounds: NumberBounds = { integer };
  const min = bound(json.minimum, json.exclusiveMinimum, Number.MIN_SAFE_INTEGER);
  const max = bound(json.maximum, json.exclusiveMaximum, Number.MAX_SAFE_INTEGER);
  if (min) bounds.min = min;
  if (max) bounds.max = max;
  return bounds;
}

/** What a key expects, in words: `an integer > 0`, `one of D, S, P, T, L`, `true or false`. */
export function describeExpected(schema: Schema): string {
  const { node, nullable } = unwrap(schema);
  const def = defOf(node);
  let text: string;
  switch (def.type) {
    case 'boolean':
      text = 'true or false';
      break;
    case 'number': {
      const b = numberBounds(node);
      text = b.integer ? 'an integer' : 'a number';
      const range: string[] = [];
      if (b.min) range.push(`${b.min.inclusive ? '>=' : '>'} ${b.min.value}`);
      if (b.max) range.push(`${b.max.inclusive ? '<=' : '<'} ${b.max.value}`);
      if (range.length > 0) text += ' ' + range.join(' and ');
      break;
    }
    case 'string':
      text = 'a string';
      break;
    case 'enum':
      text = `one of ${enumValues(node).join(', ')}`;
      break;
    case 'array': {
      const element = describeExpected(def.element as Schema);
      text = `an array (each item ${element})`;
      break;
    }
    case 'object':
    case 'record':
      text = 'an object';
      break;
    case 'union':
      text = (def.options as Schema[]).map(describeExpected).join(' or ');
      break;
    default:
      text = 'a value';
  }
  return nullable ? `${text} or null` : text;
}
