import { InvalidArgumentError } from 'commander';

/**
 * The modules a sync or contract-sync request may name, as the host takes them (any case; the
 * host's list is `CONTRACT_TYPES`, docs/sync.md "The commands"). Kept here, not imported: the
 * sync commands load no host code (docs/architecture.md "The ack command").
 */
export const MODULE_NAMES = [
  'wwwroot',
  'transact',
  'dbclient',
  'graphclient',
  'function',
  'command',
  'prompter',
  'repository',
] as const;

/**
 * `value` as a module name the host takes (an option's parser), checked before anything is sent:
 * a usage error that names the nearest name (`wwwrot`: did you mean wwwroot?) and every name.
 */
export function parseModuleName(value: string): string {
  const name = value.trim().toLowerCase();
  if ((MODULE_NAMES as readonly string[]).includes(name)) return name;
  const near = nearestName(name, MODULE_NAMES);
  throw new InvalidArgumentError(`${near ? `Did you mean ${near}? ` : ''}It is one of ${MODULE_NAMES.join(', ')}.`);
}

/** The name at the smallest edit distance from `word`, when at most a third of its length away (at least 2). */
function nearestName(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of names) {
    const d = editDistance(word, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
