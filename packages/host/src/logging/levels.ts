import type { LogLevelName, SerilogSettings } from '../settings/schema.js';

// Serilog level names, their order, and the winston levels they map to.

export const LEVEL_RANK: Record<LogLevelName, number> = {
  Verbose: 0,
  Debug: 1,
  Information: 2,
  Warning: 3,
  Error: 4,
  Fatal: 5,
};

/** winston levels (lower is more severe, winston's convention) named after Serilog's. */
export const WINSTON_LEVELS = { fatal: 0, error: 1, warn: 2, info: 3, debug: 4, verbose: 5 } as const;
export type WinstonLevel = keyof typeof WINSTON_LEVELS;

export const TO_WINSTON: Record<LogLevelName, WinstonLevel> = {
  Verbose: 'verbose',
  Debug: 'debug',
  Information: 'info',
  Warning: 'warn',
  Error: 'error',
  Fatal: 'fatal',
};

/**
 * The minimum level for a logger label: the override with the longest name that equals the label
 * or is a dotted prefix of it (`wwwroot` covers `wwwroot.sync`), else the default. Names ignore
 * case, as module ids do in this host. `Microsoft` and `System` (the shipped defaults, from .NET) match no
 * label of this host and are harmless.
 */
export function minimumLevelResolver(minimum: SerilogSettings['MinimumLevel']): (label: string | undefined) => number {
  if (typeof minimum === 'string') {
    const rank = LEVEL_RANK[minimum];
    return () => rank;
  }
  const fallback = LEVEL_RANK[minimum.Default];
  const overrides = Object.entries(minimum.Override)
    .map(([name, level]) => ({ name: name.toLowerCase(), rank: LEVEL_RANK[level] }))
    .sort((a, b) => b.name.length - a.name.length);
  return (label) => {
    if (!label) return fallback;
    const l = label.toLowerCase();
    const hit = overrides.find((o) => l === o.name || l.startsWith(o.name + '.'));
    return hit ? hit.rank : fallback;
  };
}
