import { CliError, EXIT } from '../../exit-codes.js';
import type { PushResult } from './batch-push.js';
import { planDelta, saveLocal, type HostDelta, type LocalFile } from './delta-plan.js';
import { exitCodeFor, uploadResultJson } from './outcome.js';
import { requestSettings, type RemoteOptions } from './options.js';
import { applyPending, loadPending } from './refresh-pending.js';
import { applicationFolderHint } from './path-mapping.js';
import { createProgress, formatBytes, plural } from './progress.js';
import { planPush, pushHosts, type PlannedPush } from './push-hosts.js';

export interface DeltaOptions extends RemoteOptions {
  module: string;
  token?: string;
  path?: string;
  concurrency?: number;
  dryRun?: boolean;
  delete?: boolean;
  /** Hash every local file again rather than trust the local digest cache. */
  rehash?: boolean;
  /** A release push was tried and no host has releases: the push says so. */
  releasesMissing?: boolean;
  /** The folder read and the hosts listed already (by the release push that found no releases). */
  planned?: Promise<PlannedPush>;
}

const counts = (h: HostDelta) => ({
  url: h.url,
  listed: h.listed,
  created: h.plan?.created.length ?? 0,
  changed: h.plan?.changed.length ?? 0,
  deleted: h.plan?.deleted.length ?? 0,
  unchanged: h.plan?.unchanged ?? 0,
});

/** `ack sync upload <dir>` (docs/sync.md "The delta"): send only what differs, per host. */
export async function deltaUpload(root: string, urls: string[], options: DeltaOptions): Promise<number> {
  const token = (options.token ?? process.env.ACK_SYNC_TOKEN ?? '').trim();
  const json = options.json === true;
  const say = (text: string) => !json && process.stderr.write(`ack: ${text}\n`);
  let settings = requestSettings(options);
  if (options.dryRun) settings = { ...settings, retry: { ...settings.retry, retries: 0 } };
  // The folder is read while the hosts' listings are on their way.
  const read = await (options.planned ?? planPush(root, urls, token, options, settings, say));
  const { folder } = read;
  let deltas = read.deltas;
  const files = folder.files;
  // Under a prefix no file sits at the top of the contract folder: the hint looks at nothing.
  const hint =
    folder.base === ''
      ? applicationFolderHint(
          options.module,
          files.map((f) => f.remotePath),
        )
      : undefined;
  if (token === '' && !options.dryRun) throw new CliError('no sync token: set ACK_SYNC_TOKEN (or --token)', EXIT.usage);
  if (hint) say(hint);
  if (!deltas) {
    say('no sync token: cannot compare with the hosts, so every file is listed');
    deltas = urls.map((url) => ({ url, listed: false, plan: planDelta(files, undefined, { delete: false }) }));
  }
  // Files stored before whose refresh failed go again (the listing alone shows them as done).
  const pending = loadPending(root);
  applyPending(deltas, files, pending);
  if (options.dryRun) {
    saveLocal(folder);
    return dryRunDelta(deltas, files, options, hint, say);
  }

  const failed = deltas.filter((d) => d.failure);
  for (const d of failed) say(d.failure!.error ?? `${d.url} could not be listed`);
  // A release push that found no host with releases (docs/sync.md "Releases"): said once, for the
  // hosts that are ack hosts with a listing (another server is named as such above).
  const plain = deltas.filter((d) => d.listed);
  if (options.releasesMissing && plain.length > 0)
    say(
      `${plain.map((d) => d.url).join(', ')} ${plain.length === 1 ? 'has' : 'have'} no releases: pushing file by file`,
    );
  const planned = deltas.filter((d) => d.plan);
  const totalFiles = planned.reduce(
    (n, d) => n + d.plan!.created.length + d.plan!.changed.length + d.plan!.deleted.length,
    0,
  );
  const totalBytes = planned.reduce(
    (n, d) => n + [...d.plan!.created, ...d.plan!.changed].reduce((m, f) => m + f.size, 0),
    0,
  );
  const showProgress = !json && process.stdout.isTTY === true && process.stderr.isTTY === true;
  const progress = createProgress(totalFiles, totalBytes, showProgress && totalFiles > 0);
  const several = urls.length > 1;
  const lines = resultLines();
  const results = await pushHosts(
    root,
    folder,
    pending,
    planned,
    { token, module: options.module, settings, concurrency: options.concurrency },
    (r, bytes) => {
      progress.tick(bytes);
      if (!json && !showProgress) printResult(lines, r, bytes, several);
    },
  );
  lines.flush();
  progress.done();
  const hosts = deltas.map((d) => {
    const mine = results.filter((r) => r.url === d.url);
    // What the host did, as it answered each file: a file it refused is failed, not created.
    const done = (change: PushResult['change']) => mine.filter((r) => r.ok && r.change === change).length;
    return {
      ...counts(d),
      created: done('Created'),
      changed: done('Changed'),
      deleted: done('Deleted'),
      failed: mine.filter((r) => !r.ok).length + (d.failure ? 1 : 0),
      ...(d.failure ? { error: d.failure.error } : {}),
    };
  });
  const ok = failed.length === 0 && results.every((r) => r.ok);
  if (json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok,
          module: options.module,
          change: 'Changed',
          dryRun: false,
          ...(hint ? { hint } : {}),
          hosts,
          // A host that could not be listed is one result, with its error.
          results: [
            ...failed.map((d) => ({ url: d.url, ok: false, status: d.failure!.status, error: d.failure!.error })),
            ...results.map(uploadResultJson),
          ],
        },
        null,
        2,
      )}\n`,
    );
  } else {
    if (showProgress) results.forEach((r) => !r.ok && printResult(lines, r, 0, several));
    lines.finish();
    for (const h of hosts) {
      if (deltas.find((d) => d.url === h.url)?.failure) continue;
      const sent = h.created + h.changed + h.deleted;
      process.stdout.write(
        sent === 0 && !h.failed
          ? `nothing to send to ${h.url}: ${plural(h.unchanged, 'file')} unchanged\n`
          : `${plural(h.created + h.changed, 'file')} uploaded to ${h.url} (${h.created} created, ${h.changed} changed, ${h.deleted} deleted, ${h.unchanged} unchanged${h.failed ? `, ${h.failed} failed` : ''})\n`,
      );
    }
  }
  return exitCodeFor([...results, ...failed.map((d) => d.failure!)]);
}

function printResult(lines: ResultLines, r: PushResult, bytes: number, several: boolean): void {
  const where = several ? ` on ${r.url}` : '';
  if (r.ok) lines.out(`${r.change} ${r.path}${r.change === 'Deleted' ? '' : ` (${bytes} bytes)`}${where}\n`);
  else lines.failed(r.path, r.error ?? 'failed');
}

/** Failures with one reason shown file by file; past these, counted and said once at the end. */
const FAILURES_SHOWN = 5;

type ResultLines = ReturnType<typeof resultLines>;

/**
 * The result lines, gathered and written once per turn of the event loop: a batch's hundreds of
 * results cost one write rather than one each (a write to a pipe or file blocks; docs/sync.md
 * "Speed"). `flush` writes what is gathered at once.
 */
function resultLines() {
  let out = '';
  let err = '';
  let scheduled = false;
  /** Files failed per reason: a host gone mid-push fails thousands alike, not worth a line each. */
  const reasons = new Map<string, number>();
  const flush = () => {
    scheduled = false;
    if (out) process.stdout.write(out);
    if (err) process.stderr.write(err);
    out = err = '';
  };
  const later = () => {
    if (!scheduled) setImmediate(flush);
    scheduled = true;
  };
  return {
    out(line: string) {
      out += line;
      later();
    },
    failed(file: string, reason: string) {
      const seen = (reasons.get(reason) ?? 0) + 1;
      reasons.set(reason, seen);
      if (seen > FAILURES_SHOWN) return;
      err += `ack: ${file}: ${reason}\n`;
      later();
    },
    /** Writes what is gathered, and the count of each reason's failures not shown. */
    finish() {
      for (const [reason, seen] of reasons)
        if (seen > FAILURES_SHOWN)
          err += `ack: ${seen - FAILURES_SHOWN} more files: ${reason} (--json lists every file)\n`;
      reasons.clear();
      flush();
    },
    flush,
  };
}

/** `--dry-run`: the creations, changes and deletions per host; nothing is sent. */
function dryRunDelta(
  deltas: HostDelta[],
  files: readonly LocalFile[],
  options: DeltaOptions,
  hint: string | undefined,
  say: (text: string) => void,
): number {
  // A host that could not be asked (unreachable, refused) is shown as "every file": nothing is sent
  // anyway. The run still fails: a push now would not reach it.
  const unasked = deltas.filter((d) => d.failure).map((d) => d.failure!);
  const code = exitCodeFor(unasked);
  for (const d of deltas)
    if (d.failure) {
      say(`${d.failure.error ?? `${d.url} could not be listed`}: every file is listed`);
      d.plan = planDelta(files, undefined, { delete: false });
    }
  const rows = deltas.flatMap((d) => [
    ...d.plan!.created.map((f) => ({ url: d.url, path: f.remotePath, file: f.file, change: 'Created', bytes: f.size })),
    ...d.plan!.changed.map((f) => ({ url: d.url, path: f.remotePath, file: f.file, change: 'Changed', bytes: f.size })),
    ...d.plan!.deleted.map((p) => ({ url: d.url, path: p, file: undefined, change: 'Deleted', bytes: 0 })),
  ]);
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok: unasked.length === 0,
          module: options.module,
          change: 'Changed',
          dryRun: true,
          ...(hint ? { hint } : {}),
          hosts: deltas.map(counts),
          results: rows.map((r) => ({ ...r, ok: true })),
        },
        null,
        2,
      )}\n`,
    );
    return code;
  }
  const several = deltas.length > 1;
  const anyListed = deltas.some((d) => d.listed);
  for (const r of rows) {
    const where = several ? ` on ${r.url}` : '';
    const verb = !anyListed
      ? 'upload'
      : r.change === 'Created'
        ? 'create'
        : r.change === 'Changed'
          ? 'change'
          : 'delete';
    process.stdout.write(`would ${verb} ${r.path}${r.change === 'Deleted' ? '' : ` (${r.bytes} bytes)`}${where}\n`);
  }
  if (!anyListed) {
    // No host could be compared: the plain list of what a push would send.
    const sent = deltas[0]?.plan ? [...deltas[0].plan.created, ...deltas[0].plan.changed] : [];
    const total = sent.reduce((a, f) => a + f.size, 0);
    process.stdout.write(
      `dry run: ${plural(sent.length, 'file')}, ${formatBytes(total)}, to ${deltas.map((d) => d.url).join(', ')}; nothing was sent\n`,
    );
    return code;
  }
  for (const d of deltas) {
    const c = counts(d);
    const bytes = [...d.plan!.created, ...d.plan!.changed].reduce((a, f) => a + f.size, 0);
    process.stdout.write(
      `dry run on ${d.url}: ${c.created} to create, ${c.changed} to change, ${c.deleted} to delete, ${c.unchanged} unchanged (${formatBytes(bytes)} to send); nothing was sent\n`,
    );
  }
  return code;
}
