import { createHash } from 'node:crypto';
import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import {
  addRemoteOptions,
  action,
  requestSettings,
  requireSecret,
  resolveUrls,
  type RemoteOptions,
} from './remote/options.js';
import { fetchListing, type RemoteEntry } from './remote/listing-client.js';
import { exitCodeFor, type Outcome } from './remote/outcome.js';
import {
  listLiveReleases,
  listReleases,
  noReleases,
  readRelease,
  readLiveReleases,
  readReleaseList,
  rollbackRelease,
  type ReleaseEntry,
  type ReleaseTarget,
} from './remote/release-client.js';
import { releasePrefix } from './remote/release-push.js';
import { formatBytes } from './remote/progress.js';
import { MODULE_NAMES, parseModuleName } from './remote/module-names.js';

// `ack sync releases`, `ack sync rollback` and `ack sync status` (docs/sync.md "Releases").

interface ReleaseOptions extends RemoteOptions {
  module: string;
  token?: string;
  path?: string;
  to?: string;
}

type Common = (command: Command, words?: Parameters<typeof addRemoteOptions>[1]) => Command;

function targets(options: ReleaseOptions): ReleaseTarget[] {
  const prefix = `${releasePrefix(options.path)}/`;
  const token = requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token');
  const settings = requestSettings(options);
  return resolveUrls(options).map((url) => ({ url, token, module: options.module, prefix, settings }));
}

/**
 * A host without the release endpoints, said plainly; an answer that is not what `read` takes
 * (another server) is a failure, never printed as a release.
 */
const explain =
  (read: (body: unknown) => unknown) =>
  (o: Outcome): Outcome => {
    if (noReleases(o))
      return { ...o, error: `${o.url} has no releases (ModuleConfig:IsEnabledReleases is not true there)` };
    if (o.ok && read(o.body) === undefined)
      return {
        ...o,
        ok: false,
        exit: EXIT.failed,
        error: `${o.url} did not answer with releases (is it an ack host?)`,
      };
    return o;
  };

async function releasesCommand(options: ReleaseOptions): Promise<number> {
  const answers = (await Promise.all(targets(options).map(listReleases))).map(explain(readReleaseList));
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok: answers.every((a) => a.ok),
          hosts: answers.map((a) => ({
            url: a.url,
            ok: a.ok,
            releases: a.ok ? readReleaseList(a.body) : undefined,
            error: a.error,
          })),
        },
        null,
        2,
      )}\n`,
    );
    return exitCodeFor(answers);
  }
  for (const a of answers) {
    if (!a.ok) {
      process.stderr.write(`ack: ${a.error}\n`);
      continue;
    }
    const releases = readReleaseList(a.body)!;
    if (answers.length > 1) process.stdout.write(`${a.url}\n`);
    process.stdout.write(releaseTable(releases));
  }
  return exitCodeFor(answers);
}

/** The releases as a table, newest first; the live one marked. */
export function releaseTable(releases: readonly ReleaseEntry[]): string {
  const rows = [
    ['ID', 'TIME', 'BY', 'FILES', 'BYTES', 'DIGEST', 'LIVE'],
    ...releases.map((r) => [
      r.id,
      r.time,
      r.by,
      String(r.files),
      formatBytes(r.bytes),
      r.digest.slice(0, 'sha256:'.length + 12),
      r.live ? 'live' : '',
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd(),
  );
  if (releases.length === 0) lines.push('(no releases yet)');
  return `${lines.join('\n')}\n`;
}

async function rollbackCommand(options: ReleaseOptions): Promise<number> {
  const answers = (await Promise.all(targets(options).map((t) => rollbackRelease(t, options.to)))).map(
    explain(readRelease),
  );
  if (options.json)
    process.stdout.write(
      `${JSON.stringify({ ok: answers.every((a) => a.ok), hosts: answers.map((a) => ({ url: a.url, ok: a.ok, live: a.ok ? a.body : undefined, error: a.error })) }, null, 2)}\n`,
    );
  else
    for (const a of answers) {
      if (a.ok) process.stdout.write(`${a.url}: ${readRelease(a.body)!.id} is live\n`);
      else process.stderr.write(`ack: ${a.error}\n`);
    }
  return exitCodeFor(answers);
}

interface HostState {
  url: string;
  ok: boolean;
  files?: number;
  /** SHA-256 over the sorted `<path>\0<sha256>\n` lines of the listing. */
  digest?: string;
  live?: string;
  /** Each release prefix's live release on this host (null: a prefix without a live link). */
  releases?: Map<string, string | null>;
  error?: string;
  entries?: Map<string, RemoteEntry>;
}

/** What each host holds, and where they differ. */
export function compareHosts(hosts: readonly HostState[]) {
  const listed = hosts.filter((h) => h.entries);
  const paths = new Set(listed.flatMap((h) => [...h.entries!.keys()]));
  const differences = [...paths]
    .sort()
    .map((p) => ({ path: p, hosts: Object.fromEntries(listed.map((h) => [h.url, h.entries!.get(p)?.sha256 ?? null])) }))
    .filter((d) => new Set(Object.values(d.hosts)).size > 1);
  // A prefix one host has releases for and another not differs too (`null` beside an id).
  const prefixes = new Set(listed.flatMap((h) => [...(h.releases?.keys() ?? [])]));
  const liveDifferences = [...prefixes]
    .sort()
    .map((prefix) => ({
      prefix,
      hosts: Object.fromEntries(listed.map((h) => [h.url, h.releases?.get(prefix) ?? null])),
    }))
    .filter((d) => new Set(Object.values(d.hosts)).size > 1);
  return { differences, liveDifferences };
}

/** `, live <id>` for the prefix asked, or `, live HDS/ <id>, …` for every prefix with releases. */
function liveText(h: HostState, onePrefix: boolean): string {
  if (onePrefix) return h.live ? `, live ${h.live}` : '';
  const lives = [...(h.releases ?? [])].map(([p, id]) => `${p} ${id ?? 'none'}`);
  return lives.length > 0 ? `, live ${lives.join(', ')}` : '';
}

async function statusCommand(options: ReleaseOptions): Promise<number> {
  const urls = resolveUrls(options);
  const token = requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token');
  const settings = requestSettings(options);
  const prefix = options.path === undefined ? undefined : releasePrefix(options.path);
  const failures: Outcome[] = [];
  const hosts = await Promise.all(
    urls.map(async (url): Promise<HostState> => {
      const listing = await fetchListing(url, token, options.module, prefix, settings);
      if (listing.kind !== 'listing') {
        const failure: Outcome =
          listing.kind === 'failed'
            ? listing.outcome
            : {
                url,
                ok: false,
                exit: EXIT.failed,
                error: `${url} cannot list its files (answered ${listing.kind === 'unsupported' ? listing.status : '?'})`,
              };
        failures.push(failure);
        return { url, ok: false, error: failure.error };
      }
      const lines = [...listing.entries.values()].map((e) => `${e.path}\0${e.sha256}\n`).sort();
      const digest = `sha256:${createHash('sha256').update(lines.join('')).digest('hex')}`;
      const target = { url, token, module: options.module, settings };
      let releases: Map<string, string | null>;
      let live: string | undefined;
      if (prefix !== undefined) {
        const r = await listReleases({ ...target, prefix: `${prefix}/` });
        live = r.ok ? readReleaseList(r.body)?.find((x) => x.live)?.id : undefined;
        releases = live === undefined ? new Map() : new Map([[`${prefix}/`, live]]);
      } else {
        // Every prefix with releases: a host without release endpoints has none.
        const r = await listLiveReleases(target);
        releases = (r.ok ? readLiveReleases(r.body) : undefined) ?? new Map();
      }
      return { url, ok: true, files: listing.entries.size, digest, live, releases, entries: listing.entries };
    }),
  );
  const { differences, liveDifferences } = compareHosts(hosts);
  const drift = differences.length > 0 || liveDifferences.length > 0;
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok: failures.length === 0 && !drift,
          drift,
          hosts: hosts.map(({ entries: _e, releases, ...h }) => ({
            ...h,
            releases: releases && Object.fromEntries(releases),
          })),
          differences,
          liveDifferences,
        },
        null,
        2,
      )}\n`,
    );
  } else {
    for (const f of failures) process.stderr.write(`ack: ${f.error}\n`);
    for (const h of hosts.filter((x) => x.ok))
      process.stdout.write(
        `${h.url}: ${h.files} files, ${h.digest!.slice(0, 19)}${liveText(h, prefix !== undefined)}\n`,
      );
    for (const d of differences)
      process.stdout.write(
        `differs ${d.path}: ${Object.entries(d.hosts)
          .map(([u, s]) => `${u} ${s === null ? 'missing' : s.slice(0, 12)}`)
          .join(', ')}\n`,
      );
    for (const d of liveDifferences)
      process.stdout.write(
        `differs live release ${d.prefix}: ${Object.entries(d.hosts)
          .map(([u, id]) => `${u} ${id ?? 'none'}`)
          .join(', ')}\n`,
      );
    if (!drift && failures.length === 0) process.stdout.write(`${hosts.length} hosts hold the same files\n`);
  }
  if (failures.length > 0) return exitCodeFor(failures);
  return drift ? EXIT.failed : EXIT.ok;
}

export function registerReleaseCommands(sync: Command, common: Common): void {
  common(sync.command('releases').description('list the releases of a prefix on each host (newest first)'), {
    verb: 'ask',
  })
    .requiredOption('--path <prefix>', 'the release prefix, e.g. HDS/')
    .action(action(releasesCommand, () => ({ hosts: [] })));

  common(sync.command('rollback').description('switch a prefix back to the release before the live one (or --to ID)'), {
    verb: 'switch',
  })
    .requiredOption('--path <prefix>', 'the release prefix, e.g. HDS/')
    .option('--to <id>', 'the release to switch to (default: the one before the live one)')
    .action(action(rollbackCommand, () => ({ hosts: [] })));

  addRemoteOptions(
    sync
      .command('status')
      .description('compare the hosts: files by content digest and live release; exit 1 when they differ'),
    { verb: 'compare' },
  )
    .option('--module <name>', `module: ${MODULE_NAMES.join(', ')} (default wwwroot)`, parseModuleName, 'wwwroot')
    .option(
      '--path <prefix>',
      'compare only this prefix and its live release (default: every file, every release prefix)',
    )
    .option('--token <token>', 'sync token (prefer ACK_SYNC_TOKEN)')
    .action(action(statusCommand, () => ({ hosts: [], differences: [] })));
}
