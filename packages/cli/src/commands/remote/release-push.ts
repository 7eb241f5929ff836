import type { HostDelta } from './delta-plan.js';
import type { RequestSettings } from './http.js';
import type { Outcome } from './outcome.js';
import { commitStage, discardStage, openStage, type OpenStage } from './releases.js';

// A folder push as a release on every host (docs/releases.md "A fleet on one release"): each host
// with something to change gets a stage first; only when every one is staged are the files sent
// into the stages, and only when every file landed is each stage switched live. Anything less,
// and every stage is discarded: no host switches.

/** What staging found: stages by host, hosts without releases, or the failures that stop the push. */
export type Staged =
  | { kind: 'staged'; stages: Map<string, OpenStage> }
  | { kind: 'plain'; hosts: string[] }
  | { kind: 'stopped'; failures: Outcome[] };

const hasChanges = (d: HostDelta) =>
  d.plan !== undefined && d.plan.created.length + d.plan.changed.length + d.plan.deleted.length > 0;

/**
 * Opens a stage of `prefix` on every host that has changes. A host that could not be listed, or
 * refuses a stage, stops the push (stages already opened are discarded). When no host has the
 * releases routes, the push goes on file by file (`plain`); a fleet where some have them and some
 * do not cannot switch as one and stops.
 */
export async function stageAll(
  deltas: readonly HostDelta[],
  token: string,
  module: string,
  prefix: string,
  settings: RequestSettings,
): Promise<Staged> {
  const unlisted = deltas.filter((d) => d.failure).map((d) => d.failure!);
  if (unlisted.length > 0) return { kind: 'stopped', failures: unlisted };
  // A host without the listing is an older host: it has no releases either.
  const changing = deltas.filter((d) => d.listed && hasChanges(d));
  const opened = await Promise.all(
    changing.map(async (d) => ({ url: d.url, result: await openStage(d.url, token, module, prefix, settings) })),
  );
  const stages = new Map<string, OpenStage>();
  for (const o of opened) if ('stage' in o.result) stages.set(o.url, o.result.stage);
  const failures = opened.flatMap((o) => ('failed' in o.result ? [o.result.failed] : []));
  const absent = opened.flatMap((o) => ('absent' in o.result ? [o.url] : []));
  if (failures.length === 0 && stages.size === 0) return { kind: 'plain', hosts: absent };
  if (absent.length > 0)
    failures.push(
      ...absent.map((url) => ({
        url,
        ok: false,
        exit: 1,
        error: `${url} has no releases, so the hosts cannot switch as one (push to it alone, or turn releases on)`,
      })),
    );
  if (failures.length === 0) return { kind: 'staged', stages };
  await discardAll(stages, token, module, settings);
  return { kind: 'stopped', failures };
}

/** Switches every stage live, each as soon as asked; the outcomes say which host switched. */
export function commitAll(
  stages: Map<string, OpenStage>,
  token: string,
  module: string,
  settings: RequestSettings,
): Promise<Outcome[]> {
  return Promise.all([...stages.values()].map((s) => commitStage(s, token, module, settings)));
}

export async function discardAll(
  stages: Map<string, OpenStage>,
  token: string,
  module: string,
  settings: RequestSettings,
): Promise<void> {
  await Promise.all([...stages.values()].map((s) => discardStage(s, token, module, settings)));
}
