import fs from 'node:fs';
import type { HostDelta, LocalFile } from './delta-plan.js';
import { digestCacheFile } from './local-digests.js';

// Files a host stored but whose module refresh failed (docs/sync.md "Refresh failures"): the
// host's listing shows them as sent, so the delta alone would take them as done. They are kept
// beside the local digest cache, per host, and sent again by the next push to that host.

/** Host URL → remote paths whose refresh failed there. */
export type PendingRefresh = Map<string, Set<string>>;

const fileOf = (root: string) => digestCacheFile(root).replace(/\.digests$/, '.refresh-pending');

/** True for a file the host stored and then failed to refresh (its answer says `refresh.ok: false`). */
export function refreshFailed(r: { ok: boolean; body?: unknown }): boolean {
  const refresh = (r.body as { refresh?: { ok?: unknown } } | undefined)?.refresh;
  return !r.ok && refresh?.ok === false;
}

export function loadPending(root: string): PendingRefresh {
  try {
    const doc = JSON.parse(fs.readFileSync(fileOf(root), 'utf8')) as Record<string, unknown>;
    const out: PendingRefresh = new Map();
    for (const [url, paths] of Object.entries(doc))
      if (Array.isArray(paths)) out.set(url, new Set(paths.filter((p): p is string => typeof p === 'string')));
    return out;
  } catch {
    return new Map();
  }
}

/**
 * After a push: what was sent to a host is settled there (refreshed, or pending again when its
 * refresh failed once more); what was not sent stays pending.
 */
export function savePending(
  root: string,
  before: PendingRefresh,
  results: ReadonlyArray<{ url: string; path: string; ok: boolean; body?: unknown }>,
): void {
  const next: PendingRefresh = new Map([...before].map(([u, s]) => [u, new Set(s)]));
  for (const r of results) {
    const set = next.get(r.url) ?? new Set<string>();
    if (refreshFailed(r)) set.add(r.path);
    else if (r.ok) set.delete(r.path);
    next.set(r.url, set);
  }
  const doc = Object.fromEntries([...next].filter(([, s]) => s.size > 0).map(([u, s]) => [u, [...s].sort()]));
  const file = fileOf(root);
  try {
    // unlinkSync, not rmSync: rmSync loads Node's recursive remover, which a push that has
    // nothing pending (the common case) would load only to find no file.
    if (Object.keys(doc).length === 0) fs.unlinkSync(file);
    else fs.writeFileSync(file, JSON.stringify(doc));
  } catch {
    // A cache that cannot be written costs a file sent again, or not: never the push.
  }
}

/** Moves each host's pending files that the plan counts as unchanged into its changed files. */
export function applyPending(deltas: HostDelta[], files: readonly LocalFile[], pending: PendingRefresh): void {
  for (const d of deltas) {
    const paths = pending.get(d.url);
    if (!paths || !d.plan) continue;
    const planned = new Set([...d.plan.created, ...d.plan.changed].map((f) => f.remotePath));
    const again = files.filter((f) => paths.has(f.remotePath) && !planned.has(f.remotePath));
    if (again.length === 0) continue;
    d.plan = { ...d.plan, changed: [...d.plan.changed, ...again], unchanged: d.plan.unchanged - again.length };
  }
}
