import fs from 'node:fs';
import path from 'node:path';
import { watch } from 'chokidar';
import { createKeyedQueue } from './keyed-queue.js';
import { listFiles, sha256File } from './files.js';
import { isIgnoredPath, joinRemote } from './path-mapping.js';
import { isRetryable, retryDelayMs } from './retry.js';
import { checkSyncCredentials, syncUpload, type ChangeType } from './sync-client.js';
import { applicationFolderHint } from './path-mapping.js';
import type { RequestSettings } from './http.js';
import { CliError, EXIT } from '../../exit-codes.js';
import type { Outcome } from './outcome.js';
import { noteSentDigests, planHosts, saveLocal, scanLocal } from './delta-plan.js';
import { pushPlan } from './batch-push.js';
import { createProgress } from './progress.js';

export interface WatchSettings {
  root: string;
  prefix?: string;
  module: string;
  urls: string[];
  token: string;
  settings: RequestSettings;
  debounceMs: number;
  concurrency: number;
  json: boolean;
  /** Push every file of the folder at start, before watching for changes. */
  initial?: boolean;
}

/** Job-level retries after the request-level ones are spent (then: wait for the next change). */
const JOB_RETRIES = 5;

class RefusedError extends Error {}
/** Every host answered this file with a refusal (a path it will not take, a file over its limit). */
class FileRefusedError extends Error {}

/** An answer that says the request itself is wrong: sent again unchanged, it is refused again. */
const refusesTheFile = (o: Outcome) =>
  o.status !== undefined && o.status >= 400 && o.status < 500 && o.status !== 408 && !isRetryable(o);

/**
 * `ack sync watch`: mirrors a folder into a module's contract folder on every host. Files are
 * compared by SHA-256 (so a same-size edit is sent, and a touch without change is not); each file's
 * work is debounced and serial (see keyed-queue.ts); deletions of files known to be there are sent
 * as `Deleted`. Runs until SIGINT/SIGTERM; resolves with the exit code.
 */
export async function watchFolder(w: WatchSettings): Promise<number> {
  // What each host has, as far as we know: relative path → sha256. Starts as the folder's content.
  const known = new Map<string, string>();
  for (const rel of await listFiles(w.root)) known.set(rel, await sha256File(path.join(w.root, rel)).catch(() => ''));

  const say = (event: Record<string, unknown>, text: string, error = false) => {
    if (w.json) process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`);
    else (error ? process.stderr : process.stdout).write(error ? `ack: ${text}\n` : `${text}\n`);
  };

  // Refused credentials or a host without the sync API fail now, not at the first save.
  for (const url of w.urls) {
    const check = await checkSyncCredentials(url, w.token, w.settings);
    if (!check.ok) throw new CliError(check.error ?? `${url}: the sync token was not accepted`, check.exit);
  }
  const hint = applicationFolderHint(
    w.module,
    [...known.keys()].map((rel) => joinRemote(w.prefix, rel)),
  );
  if (hint) say({ event: 'hint', hint }, hint, true);

  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));

  const push = async (rel: string, change: ChangeType, sha256?: string) => {
    const remotePath = joinRemote(w.prefix, rel);
    const file = change === 'Deleted' ? undefined : path.join(w.root, rel);
    const outcomes = await Promise.all(
      w.urls.map((url) => syncUpload(url, w.token, w.module, change, { file, remotePath, sha256 }, w.settings)),
    );
    const failed = outcomes.filter((o) => !o.ok);
    if (failed.some((o) => o.exit === EXIT.refused))
      throw new RefusedError(failed.find((o) => o.exit === EXIT.refused)!.error);
    if (failed.length > 0) {
      const message = failed.map((o) => o.error).join('; ');
      throw failed.every(refusesTheFile) ? new FileRefusedError(message) : new Error(message);
    }
    say({ event: change, path: remotePath, hosts: w.urls }, `${change} ${remotePath}`);
  };

  const syncOne = async (rel: string) => {
    const abs = path.join(w.root, rel);
    const stat = await fs.promises.stat(abs).catch(() => undefined);
    if (stat?.isFile()) {
      const sha = await sha256File(abs);
      if (known.get(rel) === sha) return; // touched, not changed
      await push(rel, known.has(rel) ? 'Changed' : 'Created', sha);
      known.set(rel, sha);
    } else if (!stat && known.has(rel)) {
      await push(rel, 'Deleted');
      known.delete(rel);
    }
  };

  const queue = createKeyedQueue({
    debounceMs: w.debounceMs,
    concurrency: w.concurrency,
    run: syncOne,
    retryDelay(rel, err, attempt) {
      if (err instanceof RefusedError) {
        say({ event: 'refused', error: err.message }, err.message, true);
        finish(EXIT.refused);
        return undefined;
      }
      const message = (err as Error).message;
      if (err instanceof FileRefusedError || attempt > JOB_RETRIES) {
        say(
          { event: 'failed', path: rel, error: message },
          `${rel}: ${message} (giving up until it changes again)`,
          true,
        );
        return undefined;
      }
      say({ event: 'retry', path: rel, attempt, error: message }, `${rel}: ${message} (retrying)`, true);
      return retryDelayMs(attempt, { ...w.settings.retry, baseMs: 1000, maxMs: 30_000 });
    },
  });

  const watcher = watch(w.root, {
    ignoreInitial: true,
    ignored: (p: string) => {
      const rel = path.relative(w.root, p);
      return rel !== '' && isIgnoredPath(rel);
    },
  });
  const toKey = (p: string) => path.relative(w.root, p).split(path.sep).join('/');
  watcher.on('add', (p) => queue.touch(toKey(p)));
  watcher.on('change', (p) => queue.touch(toKey(p)));
  watcher.on('unlink', (p) => queue.touch(toKey(p)));
  watcher.on('unlinkDir', (p) => {
    const dir = toKey(p) + '/';
    for (const rel of known.keys()) if (rel.startsWith(dir)) queue.touch(rel);
  });
  watcher.on('error', (err) =>
    say(
      { event: 'error', error: String((err as Error).message ?? err) },
      `watch error: ${(err as Error).message ?? err}`,
      true,
    ),
  );
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  if (w.initial) {
    const code = await initialPush(w, say);
    if (code !== EXIT.ok) {
      await watcher.close();
      queue.close();
      return code;
    }
  }
  // Ready to stop before saying so: a Ctrl+C right after "watching" ends the watch cleanly.
  const stop = () => finish(EXIT.ok);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  say(
    { event: 'watching', root: w.root, module: w.module, hosts: w.urls },
    `watching ${w.root} → ${w.module} on ${w.urls.join(', ')} (Ctrl+C to stop)`,
  );
  const code = await finished;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  await watcher.close();
  queue.close();
  // Let uploads already under way end (bounded), so a file is not left half-announced.
  await Promise.race([queue.idle(), new Promise((r) => setTimeout(r, 5000).unref())]);
  return code;
}

type Say = (event: Record<string, unknown>, text: string, error?: boolean) => void;

/**
 * `--initial`: the same delta as `ack sync upload <dir>` (docs/sync.md "The delta"), per host: only
 * files that are new or differ are sent (in batches when the host offers them), nothing is deleted.
 * One `initial` event per host gives the counts. A refused token ends the watch (exit 3).
 */
async function initialPush(w: WatchSettings, say: Say): Promise<number> {
  const folder = scanLocal(w.root, w.prefix, false);
  const hosts = await planHosts(w.urls, w.token, w.module, w.prefix, folder, w.settings, false, (text) =>
    say({ event: 'hint', hint: text }, text, true),
  );
  const noteSent = noteSentDigests((await folder).files);
  const showProgress = !w.json && process.stdout.isTTY === true && process.stderr.isTTY === true;
  const sends = hosts.flatMap((h) => (h.plan ? [...h.plan.created, ...h.plan.changed] : []));
  const progress = createProgress(
    sends.length,
    sends.reduce((n, f) => n + f.size, 0),
    showProgress && sends.length > 0,
  );
  let code: number = EXIT.ok;
  await Promise.all(
    hosts.map(async (h) => {
      if (h.failure) {
        say(
          { event: 'failed', url: h.url, error: h.failure.error },
          h.failure.error ?? `${h.url}: listing failed`,
          true,
        );
        code = h.failure.exit === EXIT.refused ? EXIT.refused : code;
        return;
      }
      const plan = h.plan!;
      const results = await pushPlan(h.url, w.token, w.module, plan, h.offer, w.settings, w.concurrency, (r, bytes) => {
        noteSent(r);
        progress.tick(bytes);
        if (r.ok && !showProgress) say({ event: r.change, path: r.path, hosts: [h.url] }, `${r.change} ${r.path}`);
        if (!r.ok) say({ event: 'failed', url: h.url, path: r.path, error: r.error }, `${r.path}: ${r.error}`, true);
      });
      if (results.some((r) => r.exit === EXIT.refused)) code = EXIT.refused;
      // What the host did, as it answered each file: a file it refused is failed, not created.
      const counts = {
        created: results.filter((r) => r.ok && r.change === 'Created').length,
        changed: results.filter((r) => r.ok && r.change === 'Changed').length,
        deleted: 0,
        unchanged: plan.unchanged,
        failed: results.filter((r) => !r.ok).length,
      };
      const toSend = counts.created + counts.changed;
      say(
        { event: 'initial', url: h.url, listed: h.listed, files: toSend, ...counts },
        `initial push: ${toSend} file${toSend === 1 ? '' : 's'} (${counts.created} created, ${counts.changed} changed, ${counts.unchanged} unchanged${counts.failed ? `, ${counts.failed} failed` : ''}) to ${h.url}`,
      );
    }),
  );
  progress.done();
  saveLocal(await folder);
  return code;
}
