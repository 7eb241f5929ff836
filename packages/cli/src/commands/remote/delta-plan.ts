import path from 'node:path';
import { CliError, EXIT_CODES } from './exit-codes.js';
import { hashFile, listFiles } from './files.js';
import type { RequestSettings } from './http.js';
import { fetchListing, type BatchOffer, type RemoteEntry } from './listing-client.js';
import type { Outcome } from './outcome.js';
import { isIgnoredPath, joinRemote } from './path-mapping.js';
import { runLimited } from './progress.js';

// What to send to each host (docs/sync.md "The delta"): the folder's files by SHA-256 against
// the host's listing; with `--delete`, also what the host has and the folder has not.

export interface LocalFile {
  /** Absolute local path. */
  file: string;
  /** Path in the module's contract folder. */
  remotePath: string;
  size: number;
  sha256: string;
}

export interface DeltaPlan {
  created: LocalFile[];
  changed: LocalFile[];
  unchanged: number;
  /** Remote paths to delete (only with `--delete`). */
  deleted: string[];
}

/**
 * What to send to one host. Without a listing every file counts as changed. Deletions are only the
 * host's files under the prefix that the folder lacks and that a folder sync would not skip
 * (dotfiles, editor leftovers: the folder never sends them, so it never deletes them either).
 */
export function planDelta(
  local: readonly LocalFile[],
  remote: ReadonlyMap<string, RemoteEntry> | undefined,
  options: { delete: boolean; prefix?: string },
): DeltaPlan {
  const plan: DeltaPlan = { created: [], changed: [], unchanged: 0, deleted: [] };
  for (const file of local) {
    const there = remote?.get(file.remotePath);
    if (!remote) plan.changed.push(file);
    else if (!there) plan.created.push(file);
    else if (there.sha256 !== file.sha256 || there.size !== file.size) plan.changed.push(file);
    else plan.unchanged++;
  }
  if (remote && options.delete) {
    const mine = new Set(local.map((f) => f.remotePath));
    const prefix = joinRemote(undefined, options.prefix ?? '');
    for (const remotePath of remote.keys()) {
      if (mine.has(remotePath)) continue;
      const inside =
        prefix === ''
          ? remotePath
          : remotePath.startsWith(`${prefix}/`)
            ? remotePath.slice(prefix.length + 1)
            : undefined;
      if (inside === undefined || isIgnoredPath(inside)) continue;
      plan.deleted.push(remotePath);
    }
    plan.deleted.sort();
  }
  return plan;
}

/** Every file of the folder with its remote path, size and SHA-256 (hashed once for all hosts). */
export async function localFiles(root: string, prefix: string | undefined): Promise<LocalFile[]> {
  const rels = await listFiles(root);
  return runLimited(
    rels.map((rel) => async () => {
      const file = path.join(root, rel);
      return { file, remotePath: joinRemote(prefix, rel), ...(await hashFile(file)) };
    }),
    16,
  ).catch((err: unknown) => {
    throw new CliError(`cannot read the folder: ${(err as Error).message}`, EXIT_CODES.usage);
  });
}

/** What one host holds compared with the folder, or why it could not be asked. */
export interface HostDelta {
  url: string;
  /** False when the host has no listing (an older host): every file is sent. */
  listed: boolean;
  plan?: DeltaPlan;
  offer?: BatchOffer;
  failure?: Outcome;
}

/**
 * Asks each host for its listing and plans the delta. A host without the listing is planned as
 * "every file changed" and said so once (`note`).
 */
export async function planHosts(
  urls: readonly string[],
  token: string,
  module: string,
  prefix: string | undefined,
  files: readonly LocalFile[],
  settings: RequestSettings,
  remove: boolean,
  note: (text: string) => void,
): Promise<HostDelta[]> {
  return Promise.all(
    urls.map(async (url): Promise<HostDelta> => {
      const listing = await fetchListing(url, token, module, prefix, settings);
      if (listing.kind === 'failed') return { url, listed: false, failure: listing.outcome };
      if (listing.kind === 'unsupported') {
        note(
          `${url} cannot list its files (answered ${listing.status}: an older host): sending every file${remove ? '; --delete is skipped there' : ''}`,
        );
        return { url, listed: false, plan: planDelta(files, undefined, { delete: false }) };
      }
      return {
        url,
        listed: true,
        plan: planDelta(files, listing.entries, { delete: remove, prefix }),
        offer: listing.batch,
      };
    }),
  );
}
