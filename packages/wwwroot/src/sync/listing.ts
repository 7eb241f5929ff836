import fs from 'node:fs';
import path from 'node:path';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isTemporaryFileName, resolveContainedPath } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { batchOffer } from './batch.js';
import type { DigestCache } from './digest-cache.js';
import { contractFolderOf } from './module-folders.js';
import { parseModuleName, queryOf, resolveInFolder } from './targets.js';

/** Files hashed at once while listing: enough to keep the disk busy, few enough to stay fair. */
const HASH_CONCURRENCY = 8;
/** Files whose facts are read at once before the event loop gets a turn. */
const FACTS_SLICE = 256;
/** Lines are sent in chunks of about this size rather than one write each. */
const CHUNK_BYTES = 64 * 1024;

/**
 * What a sync listing says of one file (docs/wire-formats.md "Sync listing"): its path relative to
 * the module's contract folder, its size and its SHA-256.
 */
export interface ListedFile {
  path: string;
  size: number;
  sha256: string;
}

/** A file's facts to the nanosecond; a file gone since its folder was read is no error. */
const FACTS = { bigint: true, throwIfNoEntry: false } as const;

/** True when `real` is `root` or inside it (both real paths). */
const inside = (root: string, real: string) => real === root || real.startsWith(root + path.sep);

/** A file `walkContained` found: where it is, its path relative to the root, and its facts. */
export interface ContainedFile {
  absolute: string;
  /** Relative to the root, `/` separated. */
  relative: string;
  stat: fs.BigIntStats;
}

/**
 * Walks `start` (a file or a folder under the contract folder `root`) and yields every file it
 * holds, sorted by path, relative to `root`, a few hundred at a time. Never names anything outside
 * `root`: a symlink is listed only when its real path is a file inside `root`'s real path, and
 * symlinked folders are not entered (no loops, no escape). Temporary upload files (`.*.ack-tmp`)
 * are skipped.
 */
export async function* walkContained(root: string, start: string): AsyncGenerator<ContainedFile[]> {
  const realRoot = await fs.promises.realpath(root).catch(() => undefined);
  if (!realRoot) return;
  /**
   * The file's facts when it may be listed: a regular file, or a symlink to one inside the root.
   * Plain synchronous calls, a folder's worth at a time: on a local disk a stat is microseconds,
   * far less than a promise round trip through the thread pool (docs/sync.md "Speed").
   */
  const fileFacts = (absolute: string, isLink: boolean): fs.BigIntStats | undefined => {
    try {
      if (isLink && !inside(realRoot, fs.realpathSync(absolute))) return undefined;
      const stat = fs.statSync(absolute, FACTS);
      return stat?.isFile() ? stat : undefined;
    } catch {
      return undefined;
    }
  };

  const top = await fs.promises.lstat(start).catch(() => undefined);
  if (!top) return;
  const realStart = await fs.promises.realpath(start).catch(() => undefined);
  if (!realStart || !inside(realRoot, realStart)) return;
  // The one `path.relative` of the walk: below `start`, paths are built by appending names (a
  // name read from a folder holds no separator), which costs a listing of thousands of files far
  // less than resolving each path again.
  const absoluteStart = path.resolve(start);
  const relativeStart = path.relative(path.resolve(root), absoluteStart).split(path.sep).join('/');
  if (!top.isDirectory() && !(top.isSymbolicLink() && (await fs.promises.stat(start)).isDirectory())) {
    if (isTemporaryFileName(path.basename(start))) return;
    const stat = fileFacts(start, top.isSymbolicLink());
    if (stat) yield [{ absolute: absoluteStart, relative: relativeStart, stat }];
    return;
  }

  const walk = async function* (dir: string, relative: string): AsyncGenerator<ContainedFile[]> {
    const entries = (await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []))
      .filter((entry) => !isTemporaryFileName(entry.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const dirBase = dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`;
    const relativeBase = relative === '' ? '' : `${relative}/`;
    // The folder's files are looked at in slices, the event loop getting a turn between them.
    for (let from = 0; from < entries.length; from += FACTS_SLICE) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      let files: ContainedFile[] = [];
      for (const entry of entries.slice(from, from + FACTS_SLICE)) {
        const absolute = `${dirBase}${entry.name}`;
        if (entry.isDirectory()) {
          if (files.length > 0) yield files;
          files = [];
          yield* walk(absolute, `${relativeBase}${entry.name}`);
        } else if (entry.isFile() || entry.isSymbolicLink()) {
          const stat = fileFacts(absolute, entry.isSymbolicLink());
          if (stat) files.push({ absolute, relative: `${relativeBase}${entry.name}`, stat });
        }
      }
      if (files.length > 0) yield files;
    }
  };
  yield* walk(absoluteStart, relativeStart);
}

/**
 * Streams the listing of `start` as NDJSON: one `{ path, size, sha256 }` line per file, then one
 * closing `{ done: true, files, bytes, ... }` line, so that a client can tell a whole listing from
 * a cut-off one. Hashes a few files at once but writes them in order, in chunks, and waits when
 * the client reads slowly.
 */
export async function streamListing(
  res: Response,
  root: string,
  start: string,
  cache: DigestCache,
  trailer: Record<string, unknown>,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  let files = 0;
  let bytes = 0;
  let chunk = '';
  const send = async () => {
    if (res.destroyed) throw new Error('client gone');
    const text = chunk;
    chunk = '';
    if (!res.write(text)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
  };
  const window: Array<Promise<string | undefined>> = [];
  const flush = async (keep: number) => {
    while (window.length > keep) {
      const line = await window.shift()!;
      if (line === undefined) continue;
      chunk += line;
      if (chunk.length >= CHUNK_BYTES) await send();
    }
  };
  /** `JSON.stringify` of a `ListedFile`, written out (the digest is hex, the size an integer). */
  const lineOf = (relative: string, { size, sha256 }: ListedFile | Omit<ListedFile, 'path'>) => {
    files++;
    bytes += size;
    return `{"path":${JSON.stringify(relative)},"size":${size},"sha256":"${sha256}"}\n`;
  };
  for await (const slice of walkContained(root, start))
    for (const file of slice) {
      // Most files of a listing are known already: their line is written at once, in order.
      const known = cache.known(file.absolute, file.stat);
      if (known && window.length === 0) {
        chunk += lineOf(file.relative, known);
        if (chunk.length >= CHUNK_BYTES) await send();
        continue;
      }
      // A file removed between the walk and the read is simply not listed.
      window.push(
        known
          ? Promise.resolve(lineOf(file.relative, known))
          : cache.digest(file.absolute, file.stat).then(
              (digest) => lineOf(file.relative, digest),
              () => undefined,
            ),
      );
      await flush(HASH_CONCURRENCY);
    }
  await flush(0);
  chunk += `${JSON.stringify({ done: true, files, bytes, ...trailer })}\n`;
  await send();
  res.end();
}

/**
 * `GET /wwwroot/api/sync/list?moduleName=&prefix=` (docs/wire-formats.md "Sync listing"): every file
 * under `prefix` in the module's contract folder, with size and SHA-256, as NDJSON. A bad module or
 * a prefix that leaves the folder is a 400 problem, as for an upload.
 */
export function createListHandler(runtime: WwwrootRuntime, cache: DigestCache): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const query = queryOf(req);
      const module = parseModuleName(query.get('modulename'));
      const folder = await contractFolderOf(runtime, module);
      const prefix = query.get('prefix') ?? '';
      const lexical = resolveContainedPath(folder, prefix);
      // No prefix (or only `/` and `.`) is the whole folder; anything else resolves like a target.
      const start =
        !lexical.ok && lexical.reason === 'empty' ? folder : (await resolveInFolder(folder, prefix)).absolute;
      await streamListing(res, folder, start, cache, {
        module,
        prefix: path.relative(folder, start).split(path.sep).join('/'),
        batch: batchOffer(runtime),
      });
    } catch (err) {
      if (res.headersSent) return void res.destroy(); // mid-listing: cut short, the client sees no closing line
      next(err);
    }
  };
}
