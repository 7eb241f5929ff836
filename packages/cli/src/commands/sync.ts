import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, EXIT } from '../exit-codes.js';
import {
  addRemoteOptions,
  action,
  requestSettings,
  requireSecret,
  resolveUrls,
  type RemoteOptions,
} from './remote/options.js';
import { applicationFolderHint, joinRemote } from './remote/path-mapping.js';
import { listFiles } from './remote/files.js';
import { createProgress, formatBytes, runLimited } from './remote/progress.js';
import { syncRefresh, syncUpload, type ChangeType, type UploadItem } from './remote/sync-client.js';
import { exitCodeFor, uploadResultJson, type Outcome } from './remote/outcome.js';
import { deltaUpload } from './remote/delta-upload.js';
import { releaseUpload } from './remote/release-push.js';
import { registerReleaseCommands } from './sync-releases.js';
import { MODULE_NAMES, parseModuleName } from './remote/module-names.js';

export function parseChange(value: string): ChangeType {
  const v = value.trim().toLowerCase();
  if (v === 'created') return 'Created';
  if (v === 'changed') return 'Changed';
  if (v === 'deleted') return 'Deleted';
  throw new InvalidArgumentError('Created, Changed or Deleted');
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number, 1 or more');
  return n;
}

interface SyncOptions extends RemoteOptions {
  module: string;
  token?: string;
}

interface UploadOptions extends SyncOptions {
  path?: string;
  change?: ChangeType;
  concurrency?: number;
  dryRun?: boolean;
  delete?: boolean;
  rehash?: boolean;
  /** False with `--no-release`: push file by file even to a host with releases. */
  release?: boolean;
}

/**
 * Where one file goes: `--path` itself, its own name when there is no `--path`, or (a `--path` that
 * ends with `/`, as with `cp` and `rsync`) its own name inside that folder.
 */
function oneFileTarget(local: string, option: string | undefined): string {
  if (option === undefined) return joinRemote(undefined, path.basename(local));
  return joinRemote(option, /[\\/]$/.test(option) ? path.basename(local) : '');
}

/** What to send for `ack sync upload <file|dir>`: one file, or every file of a folder under `--path`. */
async function uploadItems(target: string, options: UploadOptions, change: ChangeType): Promise<UploadItem[]> {
  const local = path.resolve(target);
  const stat = await fs.promises.stat(local).catch(() => undefined);
  if (!stat) {
    if (change === 'Deleted') return [{ remotePath: oneFileTarget(local, options.path) }];
    throw new CliError(`no such file or folder: ${target}`, EXIT.usage);
  }
  if (stat.isDirectory()) {
    return (await listFiles(local)).map((rel) => ({
      file: path.join(local, rel),
      remotePath: joinRemote(options.path, rel),
    }));
  }
  if (!stat.isFile()) throw new CliError(`not a file or folder: ${target}`, EXIT.usage);
  const remotePath = oneFileTarget(local, options.path);
  if (remotePath === '') throw new CliError('--path names no file', EXIT.usage);
  return [{ file: local, remotePath }];
}

interface UploadResult extends Outcome {
  path: string;
  file?: string;
}

async function uploadCommand(target: string, options: UploadOptions): Promise<number> {
  const urls = resolveUrls(options);
  const change = options.change ?? 'Changed';
  const local = path.resolve(target);
  const isFolder = (await fs.promises.stat(local).catch(() => undefined))?.isDirectory() === true;
  if (isFolder && change !== 'Deleted') {
    const token = (options.token ?? process.env.ACK_SYNC_TOKEN ?? '').trim();
    // A folder under a prefix goes as a release where the hosts have them (docs/releases.md).
    if (options.release !== false && !options.dryRun && token !== '' && joinRemote(options.path, '') !== '') {
      const released = await releaseUpload(local, urls, { ...options, token, path: options.path! });
      if (typeof released === 'number') return released;
      return deltaUpload(local, urls, { ...options, releasesMissing: true, planned: released.planned });
    }
    return deltaUpload(local, urls, options);
  }
  if (options.delete) throw new CliError('--delete needs a folder (and no --change Deleted)', EXIT.usage);
  const items = await uploadItems(target, options, change);
  const hint = applicationFolderHint(
    options.module,
    items.map((i) => i.remotePath),
  );
  if (options.dryRun) return dryRun(items, urls, options, change, hint);
  const token = requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token');
  const settings = requestSettings(options);
  if (hint && !options.json) process.stderr.write(`ack: ${hint}\n`);
  if (items.length === 0) {
    if (options.json)
      process.stdout.write(
        `${JSON.stringify({ ok: true, module: options.module, change, dryRun: false, results: [] }, null, 2)}\n`,
      );
    else process.stdout.write(`nothing to upload in ${target}\n`);
    return EXIT.ok;
  }
  const sizes = await Promise.all(
    items.map(async (item) =>
      item.file && change !== 'Deleted' ? ((await fs.promises.stat(item.file).catch(() => undefined))?.size ?? 0) : 0,
    ),
  );
  const sizeOf = new Map(items.map((item, i) => [item, sizes[i]!]));
  const showProgress = !options.json && process.stdout.isTTY === true && process.stderr.isTTY === true;
  const progress = createProgress(
    items.length * urls.length,
    sizes.reduce((a, b) => a + b, 0) * urls.length,
    showProgress,
  );
  const tasks = items.flatMap((item) =>
    urls.map((url) => async (): Promise<UploadResult> => {
      // The file is hashed as it is sent; the host's answer is checked against that digest.
      const { sent: _sent, ...outcome } = await syncUpload(url, token, options.module, change, item, settings);
      const result = { ...outcome, path: item.remotePath, file: item.file };
      progress.tick(sizeOf.get(item));
      if (!options.json && !showProgress) printUpload(result, change, urls.length > 1);
      return result;
    }),
  );
  const results = await runLimited(tasks, options.concurrency ?? 4);
  progress.done();
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: results.every((r) => r.ok), module: options.module, change, dryRun: false, ...(hint ? { hint } : {}), results: results.map(uploadResultJson) }, null, 2)}\n`,
    );
  } else {
    if (showProgress) results.forEach((r) => !r.ok && printUpload(r, change, urls.length > 1));
    summarise(results, urls, change);
  }
  return exitCodeFor(results);
}

/** `--dry-run`: what would be sent where, without a token, a request or a write. */
async function dryRun(
  items: UploadItem[],
  urls: string[],
  options: UploadOptions,
  change: ChangeType,
  hint: string | undefined,
): Promise<number> {
  const planned = await Promise.all(
    items.map(async (item) => ({
      path: item.remotePath,
      file: item.file,
      bytes:
        item.file && change !== 'Deleted' ? ((await fs.promises.stat(item.file).catch(() => undefined))?.size ?? 0) : 0,
    })),
  );
  if (options.json) {
    const results = planned.flatMap((p) =>
      urls.map((url) => ({ url, path: p.path, file: p.file, ok: true, bytes: p.bytes })),
    );
    process.stdout.write(
      `${JSON.stringify({ ok: true, module: options.module, change, dryRun: true, ...(hint ? { hint } : {}), results }, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  if (hint) process.stderr.write(`ack: ${hint}\n`);
  for (const p of planned)
    process.stdout.write(
      `would ${change === 'Deleted' ? 'delete' : 'upload'} ${p.path}${change === 'Deleted' ? '' : ` (${p.bytes} bytes)`}\n`,
    );
  const total = planned.reduce((a, p) => a + p.bytes, 0);
  process.stdout.write(
    `dry run: ${planned.length} file${planned.length === 1 ? '' : 's'}, ${formatBytes(total)}, to ${urls.join(', ')}; nothing was sent\n`,
  );
  return EXIT.ok;
}

function printUpload(r: UploadResult, change: ChangeType, several: boolean): void {
  const where = several ? ` on ${r.url}` : '';
  if (r.ok) {
    const body = r.body as { bytes?: number; existed?: unknown; refresh?: { via?: string } };
    const size = change === 'Deleted' ? '' : ` (${body.bytes} bytes)`;
    // What the host did, as a folder push says it: a file it did not have was created, whatever
    // --change said (an older host, the original, does not say: then --change is shown).
    const did =
      change !== 'Deleted' && typeof body.existed === 'boolean' ? (body.existed ? 'Changed' : 'Created') : change;
    process.stdout.write(`${did} ${r.path}${size}${where}\n`);
  } else {
    process.stderr.write(`ack: ${r.path}: ${r.error}\n`);
  }
}

function summarise(results: UploadResult[], urls: string[], change: ChangeType): void {
  const failed = results.filter((r) => !r.ok);
  const files = new Set(results.map((r) => r.path)).size;
  const verb = change === 'Deleted' ? 'deleted' : 'uploaded';
  if (failed.length === 0) {
    process.stdout.write(`${files} file${files === 1 ? '' : 's'} ${verb} to ${urls.join(', ')}\n`);
  } else {
    const hosts = [...new Set(failed.map((r) => r.url))];
    process.stderr.write(`ack: ${failed.length} of ${results.length} failed (on ${hosts.join(', ')})\n`);
  }
}

interface RefreshOptions extends SyncOptions {
  path: string;
  change?: ChangeType;
}

async function refreshCommand(options: RefreshOptions): Promise<number> {
  const urls = resolveUrls(options);
  const token = requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token');
  const settings = requestSettings(options);
  const change = options.change ?? 'Changed';
  const remotePath = joinRemote(undefined, options.path);
  const results = await Promise.all(
    urls.map((url) => syncRefresh(url, token, options.module, change, remotePath, settings)),
  );
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: results.every((r) => r.ok), results: results.map((r) => ({ url: r.url, ok: r.ok, status: r.status, answer: r.body, error: r.error })) }, null, 2)}\n`,
    );
  } else {
    for (const r of results) {
      if (r.ok)
        process.stdout.write(
          `refreshed ${options.module}/${remotePath} on ${r.url}: ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}\n`,
        );
      else process.stderr.write(`ack: ${r.error}\n`);
    }
  }
  return exitCodeFor(results);
}

interface WatchOptions extends SyncOptions {
  path?: string;
  debounce?: number;
  concurrency?: number;
  initial?: boolean;
}

export function registerSync(program: Command): void {
  const sync = program
    .command('sync')
    .description('push contract and screen files to running hosts (/wwwroot/api/sync); token from ACK_SYNC_TOKEN');
  const common = (command: Command, words?: Parameters<typeof addRemoteOptions>[1]) =>
    addRemoteOptions(command, words)
      .requiredOption('--module <name>', `target module: ${MODULE_NAMES.join(', ')}`, parseModuleName)
      .option('--token <token>', 'sync token (prefer ACK_SYNC_TOKEN: options show in shell history and ps)');

  common(
    sync.command('upload <file|dir>').description('upload one file, or every file of a folder (paths relative to it)'),
  )
    .option('--path <target>', "path in the module's contract folder (a file: default its name; a folder: a prefix)")
    .option('--change <type>', 'Created, Changed (default) or Deleted', parseChange)
    .option('--concurrency <n>', 'uploads at a time (default 4)', positiveInt)
    .option('--dry-run', 'list what would be created, changed and deleted, and send nothing')
    .option('--delete', 'a folder: also delete files the host has under --path and the folder has not')
    .option('--rehash', 'a folder: hash every local file again instead of trusting the local digest cache')
    .option('--no-release', 'a folder: push file by file even to hosts that take releases (stage, then one switch)')
    .action(
      action(uploadCommand, (o) => ({
        module: o.module,
        change: o.change ?? 'Changed',
        dryRun: o.dryRun === true,
        results: [],
      })),
    );

  registerReleaseCommands(sync, common);

  common(sync.command('refresh').description("ask the host to reload one contract file into the module's cache"))
    .requiredOption('--path <target>', "path in the module's contract folder")
    .option('--change <type>', 'Created, Changed (default) or Deleted', parseChange)
    .action(action(refreshCommand));

  common(
    sync
      .command('watch <dir>')
      .description('push creations, changes and deletions under a folder as they happen, until interrupted'),
    { json: 'print one JSON line per event (JSON lines) for scripts instead of text' },
  )
    .option('--path <prefix>', "folder in the module's contract folder to mirror into")
    .option('--debounce <ms>', 'quiet time before a changed file is sent (default 200)', positiveInt)
    .option('--concurrency <n>', 'uploads at a time (default 4)', positiveInt)
    .option('--initial', 'push what differs between the folder and each host first, then watch')
    .action(
      action(
        async (dir: string, options: WatchOptions) => {
          const root = path.resolve(dir);
          const stat = await fs.promises.stat(root).catch(() => undefined);
          if (!stat?.isDirectory()) throw new CliError(`not a folder: ${dir}`, EXIT.usage);
          // The watcher (chokidar) loads only for `sync watch`: `sync upload` starts without it.
          const { watchFolder } = await import('./remote/watch.js');
          return watchFolder({
            root,
            prefix: options.path,
            module: options.module,
            urls: resolveUrls(options),
            token: requireSecret(options.token, 'ACK_SYNC_TOKEN', '--token', 'sync token'),
            settings: requestSettings(options),
            debounceMs: options.debounce ?? 200,
            concurrency: options.concurrency ?? 4,
            json: options.json === true,
            initial: options.initial === true,
          });
        },
        () => ({ event: 'failed' }),
      ),
    );
}
