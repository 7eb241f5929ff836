import type { Command } from 'commander';
import { EXIT, CliError } from '../exit-codes.js';
import { action, requestSettings, requireSecret, resolveUrls, type RemoteOptions } from './remote/options.js';
import { exitCodeFor } from './remote/outcome.js';
import { listReleases, releasePrefix, rollbackRelease } from './remote/releases.js';

// `ack sync releases` and `ack sync rollback` (docs/releases.md "History and rollback").

interface ReleaseOptions extends RemoteOptions {
  module: string;
  token?: string;
  path: string;
  to?: string;
}

interface ListedRelease {
  id: string;
  time: string;
  by: string;
  files: number;
  bytes: number;
  digest: string;
  live: boolean;
}

function prefixOf(options: ReleaseOptions): string {
  const prefix = releasePrefix(options.path);
  if (!prefix) throw new CliError('--path names no release prefix (for example --path HDS/)', EXIT.usage);
  return prefix;
}

/** `ack sync releases`: a prefix's releases on each host, newest first, the live one marked. */
export async function releasesCommand(options: ReleaseOptions): Promise<number> {
  const prefix = prefixOf(options);
  const token = requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token');
  const settings = requestSettings(options);
  const outcomes = await Promise.all(
    resolveUrls(options).map((url) => listReleases(url, token, options.module, prefix, settings)),
  );
  if (options.json) {
    const hosts = outcomes.map((o) =>
      o.ok
        ? { url: o.url, ok: true, releases: (o.body as { releases: ListedRelease[] }).releases }
        : { url: o.url, ok: false, status: o.status, error: o.error },
    );
    process.stdout.write(`${JSON.stringify({ ok: outcomes.every((o) => o.ok), prefix, hosts }, null, 2)}\n`);
    return exitCodeFor(outcomes);
  }
  for (const o of outcomes) {
    if (!o.ok) {
      process.stderr.write(`ack: ${o.error}\n`);
      continue;
    }
    const releases = (o.body as { releases: ListedRelease[] }).releases;
    process.stdout.write(`${prefix} on ${o.url}: ${releases.length} release${releases.length === 1 ? '' : 's'}\n`);
    for (const r of releases)
      process.stdout.write(
        `${r.live ? '*' : ' '} ${r.id}  ${r.time}  ${r.by}  ${r.files} files  ${r.bytes} bytes  ${r.digest}\n`,
      );
  }
  return exitCodeFor(outcomes);
}

/** `ack sync rollback`: each host back to `--to`, or to the release before its live one. */
export async function rollbackCommand(options: ReleaseOptions): Promise<number> {
  const prefix = prefixOf(options);
  const token = requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token');
  const settings = requestSettings(options);
  const outcomes = await Promise.all(
    resolveUrls(options).map((url) => rollbackRelease(url, token, options.module, prefix, options.to, settings)),
  );
  if (options.json) {
    const hosts = outcomes.map((o) => ({
      url: o.url,
      ok: o.ok,
      status: o.status,
      release: o.ok ? o.body : undefined,
      error: o.error,
    }));
    process.stdout.write(`${JSON.stringify({ ok: outcomes.every((o) => o.ok), prefix, hosts }, null, 2)}\n`);
    return exitCodeFor(outcomes);
  }
  for (const o of outcomes) {
    if (!o.ok) process.stderr.write(`ack: ${o.error}\n`);
    else {
      const r = o.body as { id: string; changedFiles?: number };
      process.stdout.write(`${prefix} on ${o.url}: release ${r.id} live (${r.changedFiles ?? 0} files changed)\n`);
    }
  }
  return exitCodeFor(outcomes);
}

/** Adds the two commands under `ack sync`; `common` adds the options every sync command has. */
export function registerReleaseCommands(sync: Command, common: (c: Command) => Command): void {
  common(sync.command('releases').description("list a prefix's releases on each host (newest first; * is live)"))
    .requiredOption('--path <prefix>', 'the release prefix, for example HDS/')
    .action(action(releasesCommand));
  common(sync.command('rollback').description('switch a prefix back to an earlier release on each host, in one step'))
    .requiredOption('--path <prefix>', 'the release prefix, for example HDS/')
    .option('--to <id>', 'the release to switch to (default: the one before the live one)')
    .action(action(rollbackCommand));
}
