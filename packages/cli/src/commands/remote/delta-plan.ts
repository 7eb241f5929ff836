import { CliError, EXIT } from '../../exit-codes.js';
import { hashFile, scanFolder, type ScannedFile } from './files.js';
import { knowNothing, loadDigestCache, saveDigestCache, type KnownDigests } from './local-digests.js';
import type { RequestSettings } from './http.js';
import { fetchListing, listingOf, type BatchOffer, type RemoteEntry } from './listing-client.js';
import type { Outcome } from './outcome.js';
import { checkSyncCredentials } from './sync-client.js';
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
  /**
   * SHA-256, when known before sending: from the local digest cache, or hashed because the host
   * holds a file of the same size there. Otherwise it is computed as the file is sent.
   */
  sha256?: string;
  /** The facts the file was scanned with (what the local digest cache is keyed by). */
  scanned: ScannedFile;
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

/** The folder as scanned, with digests from the local digest cache (unless `rehash`). */
export interface LocalFolder {
  root: string;
  /** The remote folder the files go under (`joinRemote(prefix, '')`). */
  base: string;
  files: LocalFile[];
  /** When the folder was read (wall clock, ms): files touched since are not cached. */
  scannedAtMs: number;
  /** What the local digest cache knew of the files (written back only when that changed). */
  known: KnownDigests;
}

/** Every file of the folder with its remote path, size and (when cached) SHA-256; hashed only when needed. */
export async function scanLocal(root: string, prefix: string | undefined, rehash: boolean): Promise<LocalFolder> {
  const scannedAtMs = Date.now();
  try {
    const scanned = await scanFolder(root);
    const known = rehash ? knowNothing(scanned) : loadDigestCache(root, scanned);
    const base = joinRemote(prefix, '');
    // The common case (no `\\` in the name) skips the general join: thousands of files.
    let joined = false;
    const remoteOf = (rel: string) =>
      rel.includes('\\') ? ((joined = true), joinRemote(prefix, rel)) : base ? `${base}/${rel}` : rel;
    const files = scanned.map((f, i) => ({
      file: f.abs,
      remotePath: remoteOf(f.rel),
      size: f.size,
      sha256: known.digests[i],
      scanned: f,
    }));
    // Appended to one base, distinct names stay distinct: only a name read another way can collide.
    if (joined) refuseCollisions(files);
    return { root, base, files, scannedAtMs, known };
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read the folder: ${(err as Error).message}`, EXIT.usage);
  }
}

/**
 * Two local names that go to one remote path (`a\\b.html` and `a/b.html` on Linux, where `\\` is a
 * character of a name, but the host reads it as `/`): refused before anything is sent, or one
 * would silently overwrite the other (docs/sync.md "The delta").
 */
export function refuseCollisions(files: ReadonlyArray<{ remotePath: string; scanned: { rel: string } }>): void {
  const seen = new Map<string, string>();
  for (const f of files) {
    const other = seen.get(f.remotePath);
    if (other !== undefined)
      throw new CliError(
        `two local files go to one path on the host, ${f.remotePath}: ${other} and ${f.scanned.rel}; rename one`,
        EXIT.usage,
      );
    seen.set(f.remotePath, f.scanned.rel);
  }
}

/** Hashes the files that lack a digest (16 at a time). */
export async function hashMissing(files: readonly LocalFile[]): Promise<void> {
  await runLimited(
    files
      .filter((f) => f.sha256 === undefined)
      .map((f) => async () => {
        f.sha256 = (await hashFile(f.file)).sha256;
      }),
    16,
  ).catch((err: unknown) => {
    throw new CliError(`cannot read the folder: ${(err as Error).message}`, EXIT.usage);
  });
}

/**
 * Takes note of the digest a host confirmed for a file it stored as sent (hashed while it was
 * sent), so that the next run need not hash it again. It replaces a digest known before: the bytes
 * sent are what the file held when it was read.
 */
export function noteSentDigests(
  files: readonly LocalFile[],
): (result: { ok: boolean; file?: string; sha256?: string }) => void {
  // Built at the first file sent: a push that sends nothing never pays for it.
  let byFile: Map<string, LocalFile> | undefined;
  return (result) => {
    byFile ??= new Map(files.map((f) => [f.file, f]));
    const local = result.file === undefined ? undefined : byFile.get(result.file);
    if (result.ok && local && result.sha256) local.sha256 = result.sha256;
  };
}

/**
 * Keeps what this run learnt of the folder's digests (from the cache, hashed, or confirmed by a
 * host as sent) for the next run.
 */
export function saveLocal(folder: LocalFolder): void {
  saveDigestCache(folder.root, folder.files, folder.scannedAtMs, folder.known, {
    base: folder.base,
    text: () => listingOf(folder.files),
  });
}

/**
 * What a host holding exactly the folder's files would list: kept with the local digest cache
 * when the folder has not changed since, else made from the files (undefined while a digest is
 * not known).
 */
const expectedListing = (folder: LocalFolder) =>
  folder.known.listing?.base === folder.base ? folder.known.listing.bytes : listingOf(folder.files);

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
 * Asks each host for its listing and plans the delta. The listings are asked for at once, and the
 * folder (`local`, a scan that may still be running) is read meanwhile. A file the host holds with
 * the same size is hashed (when not cached) to compare; one it lacks, or holds with another size,
 * is sent without hashing first (it is hashed as it is sent); a host whose listing is exactly the
 * folder's files as cached needs nothing at all. A host without the listing is
 * planned as "every file changed" and said so once (`note`). `local` is started by the caller
 * before this is called, so that the listings are asked for while the folder is read.
 */
export async function planHosts(
  urls: readonly string[],
  token: string,
  module: string,
  prefix: string | undefined,
  local: Promise<LocalFolder>,
  settings: RequestSettings,
  remove: boolean,
  note: (text: string) => void,
): Promise<HostDelta[]> {
  // What an unchanged host would list, once the folder is read: a listing that is exactly that is
  // a host holding the folder as it is (docs/sync.md "Speed").
  const expected = local.then(expectedListing, () => undefined);
  const listings = urls.map((url) => fetchListing(url, token, module, prefix, settings, expected));
  const { files } = await local;
  return Promise.all(
    urls.map(async (url, i): Promise<HostDelta> => {
      const listing = await listings[i]!;
      if (listing.kind === 'failed') return { url, listed: false, failure: listing.outcome };
      if (listing.kind === 'unsupported') {
        // An older ack or the original host speaks the sync wire without the listing; any other
        // server has no refresh route either, and would answer each file with its own error page.
        const probe = await checkSyncCredentials(url, token, settings);
        if (!probe.ok) {
          const failure: Outcome =
            probe.status === 404 || probe.status === 405
              ? {
                  ...probe,
                  error: `${url} does not take sync pushes (GET /wwwroot/api/sync/list and /wwwroot/api/sync/refresh answered ${listing.status} and ${probe.status}): it is not an ack host, or has no wwwroot module; check --url`,
                }
              : probe;
          return { url, listed: false, failure };
        }
        note(
          `${url} cannot list its files (answered ${listing.status}: an older host): sending every file${remove ? '; --delete is skipped there' : ''}`,
        );
        return { url, listed: false, plan: planDelta(files, undefined, { delete: false }) };
      }
      if (listing.kind === 'same')
        return {
          url,
          listed: true,
          plan: { created: [], changed: [], unchanged: files.length, deleted: [] },
          offer: listing.batch,
        };
      await hashMissing(files.filter((f) => listing.entries.get(f.remotePath)?.size === f.size));
      return {
        url,
        listed: true,
        plan: planDelta(files, listing.entries, { delete: remove, prefix }),
        offer: listing.batch,
      };
    }),
  );
}
