import type { ProblemTableEntry } from '../http/problem-codes.js';

/** What a row's first cell names: its code, pattern (`<prefix>.invalid_path`) or prefix. */
export function problemRowName(entry: ProblemTableEntry): string {
  return 'prefix' in entry ? entry.prefix : 'pattern' in entry ? entry.pattern : entry.code;
}

/** The key a row must have: its name upper-cased, `.` as `_`, `<` and `>` dropped. */
export function problemRowKey(entry: ProblemTableEntry): string {
  return problemRowName(entry).replace(/[<>]/g, '').replace(/\./g, '_').toUpperCase();
}

const CODE = /^[a-z][a-z_]*(\.[a-z][a-z_]*)?$/;

/**
 * What is wrong with a problem-code table (docs/errors.md): keys that do not follow from the code,
 * codes a client could not branch on, statuses that are not errors, patterns without one hole, a
 * prefix whose family has no pattern (here or in the tables `extending` builds on), a code given
 * twice. Empty when the table is sound.
 */
export function problemTableFaults(
  table: Record<string, ProblemTableEntry>,
  extending: Array<Record<string, ProblemTableEntry>> = [],
): string[] {
  const faults: string[] = [];
  const seen = new Set<string>();
  const entries = Object.entries(table);
  for (const [key, entry] of entries) {
    const name = problemRowName(entry);
    if (key !== problemRowKey(entry)) faults.push(`${key}: the key of ${name} is ${problemRowKey(entry)}`);
    if (seen.has(name)) faults.push(`${key}: ${name} is in the table twice`);
    seen.add(name);
    if ('prefix' in entry) {
      if (!/^[a-z][a-z_]*$/.test(entry.prefix)) faults.push(`${key}: prefix ${entry.prefix} is not a plain name`);
      const patterns = [table, ...extending].flatMap((t) => Object.values(t));
      if (!patterns.some((e) => 'pattern' in e && e.family === entry.family))
        faults.push(`${key}: no pattern of family ${entry.family}`);
      continue;
    }
    const status = entry.status;
    if (status !== '4xx' && !(Number.isInteger(status) && status >= 400 && status <= 599))
      faults.push(`${key}: status ${status} is not an error status`);
    if (entry.meaning.trim() === '' || entry.meaning.includes('\n')) faults.push(`${key}: the meaning is not one line`);
    if ('pattern' in entry) {
      if ((entry.pattern.match(/<[a-z]+>/g) ?? []).length !== 1) faults.push(`${key}: ${name} has not one <hole>`);
      if (!CODE.test(entry.code('x'))) faults.push(`${key}: ${name} does not build a code`);
    } else if (!CODE.test(entry.code)) faults.push(`${key}: ${name} is not a code (<capability>.<reason>)`);
  }
  return faults;
}
