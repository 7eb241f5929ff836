import type { z } from 'zod';
import type { JsonFile } from './json-file.js';
import { canonicalKey, childSchema, objectKeys, takesAnyKey } from './schema-walk.js';

// Keys a settings file holds that the schema does not know: most often a typo, which would
// otherwise be ignored without a word (docs/configuration.md, "Mistakes the host points out").

export interface UnknownKey {
  /** Path of the unknown key, parents first. */
  path: (string | number)[];
  /** The known key it most likely meant, if one is close. */
  suggestion?: string;
}

export interface UnknownKeyOptions {
  /** Match keys ignoring case, as .NET configuration does (settings files). Default true. */
  ignoreCase?: boolean;
  /**
   * Whether any unknown key under `parent` is reported. Elsewhere only keys close to a known one are
   * (sections such as `Kestrel` legitimately carry keys this host does not read). Default: all.
   */
  reportAll?: (parent: readonly (string | number)[]) => boolean;
}

export function findUnknownKeys(value: unknown, schema: z.ZodType, options: UnknownKeyOptions = {}): UnknownKey[] {
  const out: UnknownKey[] = [];
  const ignoreCase = options.ignoreCase ?? true;
  const walk = (v: unknown, s: z.ZodType | undefined, at: (string | number)[]) => {
    if (!s || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, childSchema(s, i), [...at, i]));
      return;
    }
    const known = objectKeys(s);
    const any = takesAnyKey(s);
    for (const [key, child] of Object.entries(v as Record<string, unknown>)) {
      const name = ignoreCase ? canonicalKey(s, key) : key;
      if (!known || known.includes(name) || any) {
        walk(child, childSchema(s, name), [...at, name]);
        continue;
      }
      const suggestion = closestKey(key, known);
      if (suggestion !== undefined || (options.reportAll?.(at) ?? true))
        out.push({ path: [...at, key], ...(suggestion ? { suggestion } : {}) });
    }
  };
  walk(value, schema, []);
  return out;
}

/** One warning line per unknown key: `file:line:column: unknown key "A:B" (ignored); did you mean `C`?` */
export function describeUnknownKeys(
  file: string,
  json: Pick<JsonFile, 'locate'> | undefined,
  found: readonly UnknownKey[],
  separator = ':',
): string[] {
  return found.map((u) => {
    const where = json?.locate(u.path);
    const key = u.path.reduce<string>(
      (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc === '' ? p : `${acc}${separator}${p}`),
      '',
    );
    return `${file}${where ? `:${where}` : ''}: unknown key "${key}" (ignored)${u.suggestion ? `; did you mean \`${u.suggestion}\`?` : ''}`;
  });
}

/**
 * The candidate closest to `key` by edit distance (ignoring case), when close enough to be a
 * plausible typo: at most a third of the key's length, and at least 1 or 2 edits for short keys.
 * A candidate that differs only in case is the closest of all.
 */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const wanted = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(wanted, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.max(wanted.length <= 4 ? 1 : 2, Math.floor(wanted.length / 3));
  return bestDistance <= limit ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1);
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1]!;
}
