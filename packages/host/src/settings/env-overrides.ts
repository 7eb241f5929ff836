import type { z } from 'zod';
import {
  canonicalKey,
  readAsDotNet,
  childSchema,
  describeExpected,
  kindOf,
  NUMBER_TEXT,
  unionOptions,
  unwrap,
} from './schema-walk.js';

// Environment overrides in the .NET convention the original host reads: `__` separates sections
// (`AppSettings__Security__ExposeSecretValues=true`), array items are numbered
// (`AppSettings__LoadModules__0=wwwroot`), names ignore case, and the environment wins over the file.
// Only variables whose first section is one of the schema's sections are read. Values are text;
// each is converted to the type the schema expects at its key.

export interface EnvOverrideIssue {
  /** Colon path as .NET writes it, e.g. `AppSettings:Security:MaxContractSyncFileBytes`. */
  key: string;
  variable: string;
  problem: string;
}

export interface EnvOverrideResult {
  /** Colon path (lower case) → the variable that set it. */
  sources: Map<string, string>;
  issues: EnvOverrideIssue[];
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

/** Applies the overrides to `raw` (parsed appsettings.json, canonical keys) in place. */
export function applyEnvOverrides(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  schema: z.ZodType,
): EnvOverrideResult {
  const sources = new Map<string, string>();
  const issues: EnvOverrideIssue[] = [];
  const names = Object.keys(env)
    .filter((name) => name.includes('__') && env[name] !== undefined)
    .sort();
  for (const variable of names) {
    const segments = variable.split('__');
    if (segments.some((s) => s === '')) continue;
    const section = childSchema(schema, segments[0]!);
    if (!section) continue; // PATH, HOME, ASPNETCORE_...: not ours.
    const path: (string | number)[] = [];
    let node: z.ZodType | undefined = schema;
    let container: Container = raw;
    let problem: string | undefined;
    for (let i = 0; i < segments.length; i++) {
      const last = i === segments.length - 1;
      let key: string | number;
      if (Array.isArray(container)) {
        if (!/^\d+$/.test(segments[i]!)) {
          path.push(segments[i]!);
          problem = `"${segments[i]}" is not an item number (this key is a list: use __0, __1, ...)`;
          break;
        }
        key = Number(segments[i]);
      } else key = canonicalKey(node, segments[i]!);
      path.push(key);
      const child = childSchema(node, key);
      if (last) {
        const converted = convert(env[variable]!, child);
        if ('problem' in converted) problem = converted.problem;
        else setIn(container, key, converted.value);
        break;
      }
      let next = getIn(container, key);
      if (!isContainer(next)) {
        // A Serilog level given as text becomes the Default of the object form, so that
        // `Serilog__MinimumLevel__Override__X` can still be added to it.
        // Otherwise start from the default (a list keeps its default items, as the original's
        // shipped file holds them), or empty.
        if (typeof next === 'string' && child && kindOf(child) === 'union') next = { Default: next };
        else {
          const seed = child ? unwrap(child).defaultValue : undefined;
          next = isContainer(seed) ? seed : child && kindOf(child) === 'array' ? [] : {};
        }
        setIn(container, key, next);
      }
      container = next as Container;
      node = child;
    }
    const colonPath = path.join(':');
    if (problem) issues.push({ key: colonPath, variable, problem });
    else sources.set(colonPath.toLowerCase(), variable);
  }
  compactArrays(raw);
  return { sources, issues };
}

function getIn(container: Container, key: string | number): unknown {
  return (container as Record<string | number, unknown>)[key];
}

function setIn(container: Container, key: string | number, value: unknown): void {
  (container as Record<string | number, unknown>)[key] = value;
}

/** `__5` on a list of three adds a fourth item, as .NET's binder does (the gaps close). */
function compactArrays(value: unknown): void {
  if (!isContainer(value)) return;
  if (Array.isArray(value)) {
    const dense = value.filter(() => true);
    value.length = 0;
    value.push(...dense);
  }
  for (const v of Object.values(value)) compactArrays(v);
}

type Converted = { value: unknown } | { problem: string };

function convert(text: string, schema: z.ZodType | undefined): Converted {
  if (!schema) return { value: text }; // A key this host does not know: kept as text.
  const { nullable } = unwrap(schema);
  const trimmed = text.trim();
  if (nullable && (trimmed === '' || trimmed.toLowerCase() === 'null')) return { value: null };
  const kind = kindOf(schema);
  const fail = (): Converted => ({ problem: `expected ${describeExpected(schema)}, got ${JSON.stringify(text)}` });
  switch (kind) {
    case 'boolean':
      if (/^(true|false)$/i.test(trimmed)) return { value: trimmed.toLowerCase() === 'true' };
      return fail();
    case 'number':
      if (NUMBER_TEXT.test(trimmed)) return { value: Number(trimmed) };
      return fail();
    case 'string':
    case 'enum':
      return { value: readAsDotNet(text, schema) };
    case 'union': {
      const kinds = unionOptions(schema).map(kindOf);
      if (kinds.includes('string') || kinds.includes('enum')) return { value: readAsDotNet(text, schema) };
      if (kinds.includes('number')) return convert(text, unionOptions(schema)[kinds.indexOf('number')]);
      return fail();
    }
    case 'object':
    case 'record':
    case 'array':
      return {
        problem: `is a section, not a value: set its keys with one more "__" (e.g. ${kind === 'array' ? '__0' : '__Name'})`,
      };
    default:
      return { value: text };
  }
}
