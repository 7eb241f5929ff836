import { CliError, EXIT } from '../../exit-codes.js';
import type { PushResult } from './batch-push.js';
import type { HostDelta } from './delta-plan.js';
import { exitCodeFor, type Outcome } from './outcome.js';
import { requestSettings, type RemoteOptions } from './options.js';
import { joinRemote } from './path-mapping.js';
import { plural } from './progress.js';
import { planPush, pushHosts, type PlannedPush } from './push-hosts.js';
import { applyPending, loadPending } from './refresh-pending.js';
import {
  commitRelease,
  discardRelease,
  listReleases,
  newReleaseId,
  noReleases,
  rollbackRelease,
  stageRelease,
  type ReleaseTarget,
} from './release-client.js';

// A folder push as a release (docs/releases.md, docs/sync.md "Releases"): every host stages the
// delta beside its live tree, and only when every host has staged all of it does each switch.
// One host that cannot stage (down, refused) means no host switches.

export interface ReleasePushOptions extends RemoteOptions {
  module: string;
  token: string;
  path: string;
  concurrency?: number;
  delete?: boolean;
  rehash?: boolean;
}

/** What came of one host. */
interface HostRelease {
  url: string;
  /** `switched` only when the commit went through. */
  state: 'switched' | 'unchanged' | 'discarded' | 'not staged' | 'not listed' | 'switched back' | 'commit failed';
  id?: string;
  created: number;
  changed: number;
  deleted: number;
  unchanged: number;
  failed: number;
  error?: string;
}

/** No host has releases: the push goes file by file, with the folder read and listed already, if it was. */
export interface FileByFile {
  planned?: Promise<PlannedPush>;
}

/**
 * `ack sync upload DIR --path P/` to hosts with releases: the exit code. Answers `FileByFile` when
 * no host has the release endpoints (the caller then pushes file by file, as before).
 */
export async function releaseUpload(
  root: string,
  urls: string[],
  options: ReleasePushOptions,
): Promise<number | FileByFile> {
  const json = options.json === true;
  const say = (text: string) => !json && process.stderr.write(`ack: ${text}\n`);
  const settings = requestSettings(options);
  const prefix = `${joinRemote(undefined, options.path)}/`;
  const target = (url: string): ReleaseTarget => ({
    url,
    token: options.token,
    module: options.module,
    prefix,
    settings,
  });
  // The folder is read and the hosts listed while they are asked whether they have releases (one
  // round trip less on a no-op push). When none has, the push goes file by file with that listing,
  // as before (the delta push says so for each host it can list).
  const planned = planPush(root, urls, options.token, options, settings, say);
  // Awaited below, or by the file-by-file push: never a rejection left unhandled meanwhile.
  planned.catch(() => undefined);
  const probes = await Promise.all(urls.map((url) => listReleases(target(url))));
  if (probes.every(noReleases)) return { planned };
  const { folder, deltas: listed } = await planned;
  const deltas = listed ?? [];
  // Files stored by a push before whose refresh failed go again (docs/sync.md "Refresh failures").
  const pending = loadPending(root);
  applyPending(deltas, folder.files, pending);
  const rows = new Map<string, HostRelease>(deltas.map((d) => [d.url, row(d)]));

  // A host that could not even be listed stages nothing, and so none switches.
  const unlisted = deltas.filter((d) => d.failure || !d.plan);
  if (unlisted.length > 0) {
    for (const d of unlisted)
      Object.assign(rows.get(d.url)!, { state: 'not listed', error: d.failure?.error ?? 'no listing' });
    for (const d of deltas.filter((x) => !unlisted.includes(x))) rows.get(d.url)!.state = 'not staged';
    return report([...rows.values()], [], options, unlisted.map((d) => d.failure!).filter(Boolean), say);
  }
  const busy = deltas.filter((d) => d.plan!.created.length + d.plan!.changed.length + d.plan!.deleted.length > 0);
  if (busy.length === 0) {
    for (const r of rows.values()) r.state = 'unchanged';
    return report([...rows.values()], [], options, [], say);
  }

  // Stage first, everywhere; every stage is discarded when one host cannot stage.
  const releaseId = newReleaseId();
  const staged = await Promise.all(busy.map((d) => stageRelease(target(d.url), releaseId)));
  if (staged.every(noReleases)) {
    say(`${busy.map((d) => d.url).join(', ')} ${busy.length === 1 ? 'has' : 'have'} no releases: pushing file by file`);
    return {};
  }
  const ids = new Map<string, string>();
  // A host staged under another id than asked (not an ack host of this kind) counts as refused.
  staged.forEach((o, i) => {
    if (o.ok && (o.body as { id?: unknown } | undefined)?.id !== releaseId)
      Object.assign(o, { ok: false, exit: EXIT.failed, error: `${o.url} did not stage ${releaseId}` });
    if (o.ok) ids.set(busy[i]!.url, releaseId);
  });
  const stageFailures = staged.filter((o) => !o.ok);
  if (stageFailures.length > 0) {
    staged.forEach((o, i) => {
      const r = rows.get(busy[i]!.url)!;
      if (!o.ok) {
        r.state = 'not staged';
        r.error = noReleases(o)
          ? `${o.url} has no releases (ModuleConfig:IsEnabledReleases); push with --no-release`
          : o.error;
      }
    });
    await discardAll(ids, target, rows);
    return report([...rows.values()], [], options, stageFailures, say);
  }

  // The delta into every stage, in batches as a plain push (prefix-relative paths).
  const results = await pushHosts(
    root,
    folder,
    pending,
    busy,
    { token: options.token, module: options.module, settings, concurrency: options.concurrency },
    () => undefined,
    (url) => ({ target: target(url), id: ids.get(url)! }),
  );
  for (const r of results) {
    const h = rows.get(r.url)!;
    if (!r.ok) h.failed++;
  }
  if (results.some((r) => !r.ok)) {
    await discardAll(ids, target, rows);
    return report([...rows.values()], results, options, [], say);
  }

  // Every host staged all of it: the switches.
  const commits = await Promise.all(busy.map((d) => commitRelease(target(d.url), ids.get(d.url)!)));
  commits.forEach((o, i) => {
    const r = rows.get(busy[i]!.url)!;
    r.id = ids.get(busy[i]!.url);
    r.state = o.ok ? 'switched' : 'commit failed';
    if (!o.ok) r.error = o.error;
  });
  for (const d of deltas.filter((x) => !busy.includes(x))) rows.get(d.url)!.state = 'unchanged';
  const commitFailures = commits.filter((o) => !o.ok);
  if (commitFailures.length > 0) {
    // One host could not switch: the others go back to the release they served before.
    await Promise.all(
      busy.map(async (d, i) => {
        if (!commits[i]!.ok) {
          await discardRelease(target(d.url), ids.get(d.url)!);
          return;
        }
        const back = await rollbackRelease(target(d.url));
        const r = rows.get(d.url)!;
        if (back.ok) r.state = 'switched back';
        else r.error = `switched, and could not switch back: ${back.error}`;
      }),
    );
  }
  return report([...rows.values()], results, options, commitFailures, say);
}

function row(d: HostDelta): HostRelease {
  return {
    url: d.url,
    state: 'not staged',
    created: d.plan?.created.length ?? 0,
    changed: d.plan?.changed.length ?? 0,
    deleted: d.plan?.deleted.length ?? 0,
    unchanged: d.plan?.unchanged ?? 0,
    failed: 0,
  };
}

async function discardAll(
  ids: Map<string, string>,
  target: (url: string) => ReleaseTarget,
  rows: Map<string, HostRelease>,
): Promise<void> {
  await Promise.all(
    [...ids].map(async ([url, id]) => {
      const o = await discardRelease(target(url), id);
      const r = rows.get(url)!;
      r.id = id;
      r.state = 'discarded';
      if (!o.ok) r.error = `its stage could not be discarded: ${o.error}`;
    }),
  );
}

/** Prints one line per host (or the JSON document) and answers the exit code. */
function report(
  hosts: HostRelease[],
  results: PushResult[],
  options: ReleasePushOptions,
  failures: Outcome[],
  say: (text: string) => void,
): number {
  const ok = hosts.every((h) => h.state === 'switched' || h.state === 'unchanged');
  const failedFiles = results.filter((r) => !r.ok);
  const code = ok ? EXIT.ok : exitCodeFor([...failures, ...failedFiles]) || EXIT.failed;
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok,
          module: options.module,
          change: 'Changed',
          dryRun: false,
          release: true,
          hosts,
          results: results.map((r) => ({
            url: r.url,
            path: r.path,
            file: r.file,
            change: r.change,
            ok: r.ok,
            status: r.status,
            sha256: r.sha256,
            error: r.error,
          })),
        },
        null,
        2,
      )}\n`,
    );
    return code;
  }
  const shown = new Set<string>();
  for (const r of failedFiles) {
    if (shown.size >= 5) break;
    shown.add(r.path);
    say(`${r.path}: ${r.error ?? 'failed'}`);
  }
  for (const h of hosts) {
    const counts = `${h.created} created, ${h.changed} changed, ${h.deleted} deleted, ${h.unchanged} unchanged`;
    const line =
      h.state === 'switched'
        ? `released ${h.id} on ${h.url}: ${counts}`
        : h.state === 'unchanged'
          ? `nothing to send to ${h.url}: ${plural(h.unchanged, 'file')} unchanged`
          : `${h.url}: ${h.state}${h.id ? ` (${h.id})` : ''}${h.error ? `: ${h.error}` : h.failed ? `: ${plural(h.failed, 'file')} failed` : ''}`;
    if (h.state === 'switched' || h.state === 'unchanged') process.stdout.write(`${line}\n`);
    else say(line);
  }
  if (!ok)
    say(
      `no host switched${hosts.some((h) => h.state === 'switched back') ? ' (those that had were switched back)' : ''}`,
    );
  return code;
}

/** The one place a release push refuses its input before anything is sent. */
export function releasePrefix(path: string | undefined): string {
  const p = joinRemote(undefined, path ?? '');
  if (p === '') throw new CliError('a release needs --path (the prefix it switches, e.g. --path HDS/)', EXIT.usage);
  return p;
}
