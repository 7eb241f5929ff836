import fs from 'node:fs';
import path from 'node:path';
import type { Response } from 'express';
import { isTemporaryFileName } from '@ack/host/serving';
import type { DigestCache, ListedFile } from './digest-cache.js';
import { RELEASES_FOLDER } from '../releases/layout.js';

/** Files hashed at once while listing: enough to keep the disk busy, few enough to stay fair. */
const HASH_CONCURRENCY = 8;
/** Files whose facts are read (or folders entered) before the event loop gets a turn. */
const FACTS_SLICE = 256;
/** Lines are sent in chunks of about this size rather than one write each. */
const CHUNK_BYTES = 64 * 1024;

/** A file's facts to the nanosecond. */
const FACTS = { bigint: true } as const;

/** True when `real` is `root` or inside it (both real paths). */
const inside = (root: string, real: string) => real === root || real.startsWith(root + path.sep);
/** Names in one folder are never equal: one comparison orders them. */
const byName = (a: fs.Dirent, b: fs.Dirent) => (a.name < b.name ? -1 : 1);
/** The path of `name` in the folder `dir` (a name read from a folder holds no separator). */
const childOf = (dir: string, name: string) => (dir.endsWith(path.sep) ? `${dir}${name}` : `${dir}${path.sep}${name}`);
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves when `res` can take more, or is closed; both listeners go either way (a listing waits
 * at each chunk: left behind, they added up to a listener leak warning past ten chunks).
 */
const drained = (res: Response) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });

/** Files of one folder that `walkContained` found, in order, with their facts. */
export interface ContainedSlice {
  /** The folder, absolute. */
  dir: string;
  /** The folder relative to the root, `/` separated, ending in `/` (`''` for the root itself). */
  base: string;
  names: string[];
  stats: fs.BigIntStats[];
}

/**
 * A folder's entries, sorted by name as JavaScript compares strings, temporary upload files left
 * out; none when it cannot be read. Read in the thread pool, which hands them over sorted by their
 * UTF-8 bytes: the sort here only moves names whose two orders differ (characters past U+FFFF
 * beside U+E000-U+FFFF), so it costs little (100,000 entries: 3 ms, against 60 ms unsorted). The walk asks for
 * the next folder before it needs it, so that the round trip costs it no wait (docs/sync.md
 * "Speed").
 */
const readFolder = (dir: string): Promise<fs.Dirent[]> =>
  fs.promises.readdir(dir, { withFileTypes: true }).then(
    (entries) => entries.filter((entry) => !isTemporaryFileName(entry.name)).sort(byName),
    () => [],
  );

/**
 * Walks `start` (a file or a folder under the contract folder `root`) and yields every file it
 * holds, sorted by path, relative to `root`, a folder's slice at a time. Never names anything
 * outside `root`: a symlink is listed only when its real path is a file inside `root`'s real path,
 * and symlinked folders are not entered (no loops, no escape). Temporary upload files (`.*.ack-tmp`)
 * are skipped.
 */
export async function* walkContained(root: string, start: string): AsyncGenerator<ContainedSlice> {
  const realRoot = await fs.promises.realpath(root).catch(() => undefined);
  if (!realRoot) return;
  /**
   * The file's facts when it may be listed: a regular file, or a symlink to one inside the root.
   * Plain synchronous calls, a slice at a time: on a local disk a stat is microseconds, far less
   * than a promise round trip through the thread pool (docs/sync.md "Speed").
   */
  const fileFacts = (absolute: string, isLink: boolean): fs.BigIntStats | undefined => {
    try {
      if (isLink && !inside(realRoot, fs.realpathSync(absolute))) return undefined;
      const stat = fs.statSync(absolute, FACTS);
      if (stat.isFile()) return stat;
    } catch {
      // Gone since its folder was read, or a link that leads nowhere: not listed, no error.
    }
    return undefined;
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
    const name = path.basename(absoluteStart);
    if (isTemporaryFileName(name)) return;
    const stat = fileFacts(absoluteStart, top.isSymbolicLink());
    const base = relativeStart.slice(0, relativeStart.length - name.length);
    if (stat) yield { dir: path.dirname(absoluteStart), base, names: [name], stats: [stat] };
    return;
  }

  // Depth first, without recursion: the folders entered and not yet done, each with its sorted
  // entries and how far it has come; a folder is entered where its name sorts. The next folder
  // is read while the files before it are looked at.
  interface Folder {
    dir: string;
    base: string;
    entries?: fs.Dirent[];
    at: number;
  }
  const ahead = new Map<string, Promise<fs.Dirent[]>>();
  /** Starts reading the next folder of an entered `folder`, from where it has come, if not started yet. */
  const readAhead = ({ dir, entries, at }: Folder) => {
    const list = entries!;
    while (at < list.length && !list[at]!.isDirectory()) at++;
    const next = at < list.length ? childOf(dir, list[at]!.name) : undefined;
    if (next !== undefined && !ahead.has(next)) ahead.set(next, readFolder(next));
  };
  const stack: Folder[] = [{ dir: absoluteStart, base: relativeStart === '' ? '' : `${relativeStart}/`, at: 0 }];
  let spent = 0;
  while (stack.length > 0) {
    const folder = stack[stack.length - 1]!;
    if (!folder.entries) {
      folder.entries = await (ahead.get(folder.dir) ?? readFolder(folder.dir));
      ahead.delete(folder.dir);
      spent++;
      readAhead(folder);
      if (stack.length > 1) readAhead(stack[stack.length - 2]!);
    }
    const { dir, base, entries } = folder;
    const dirBase = childOf(dir, '');
    const names: string[] = [];
    const stats: fs.BigIntStats[] = [];
    let inner: Folder | undefined;
    while (folder.at < entries.length && names.length < FACTS_SLICE) {
      const entry = entries[folder.at++]!;
      // Releases (docs/releases.md "Layout on disk"): their store is not contract files, and a
      // prefix's link is listed as the folder of its live release.
      if (base === '' && entry.name === RELEASES_FOLDER) continue;
      if (entry.isSymbolicLink() && isReleaseLink(realRoot, `${dirBase}${entry.name}`)) {
        inner = { dir: childOf(dir, entry.name), base: `${base}${entry.name}/`, at: 0 };
        break;
      }
      if (entry.isDirectory()) {
        inner = { dir: childOf(dir, entry.name), base: `${base}${entry.name}/`, at: 0 };
        break;
      }
      // Anything else (a socket, a pipe, a device) is left out by `fileFacts`.
      const stat = fileFacts(`${dirBase}${entry.name}`, entry.isSymbolicLink());
      spent++;
      if (stat) {
        names.push(entry.name);
        stats.push(stat);
      }
    }
    if (names.length > 0) yield { dir, base, names, stats };
    if (inner) stack.push(inner);
    else if (folder.at >= entries.length) stack.pop();
    // The event loop gets a turn every slice's worth of work, however the folders are cut.
    if (spent >= FACTS_SLICE) {
      spent = 0;
      await turn();
    }
  }
}

/** A symlink to a release of this contract folder: a folder under `<root>/.ack-releases/`. */
function isReleaseLink(realRoot: string, absolute: string): boolean {
  try {
    const real = fs.realpathSync(absolute);
    return inside(path.join(realRoot, RELEASES_FOLDER), real) && fs.statSync(real).isDirectory();
  } catch {
    // A link that leads nowhere is no release.
  }
  return false;
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
    if (!res.write(text)) await drained(res);
  };
  const add = (file: ListedFile) => {
    chunk += file.line;
    files++;
    bytes += file.bytes;
  };
  const window: Array<Promise<ListedFile | undefined>> = [];
  const flush = async (keep: number) => {
    while (window.length > keep) {
      const file = await window.shift()!;
      if (file === undefined) continue;
      add(file);
      if (chunk.length >= CHUNK_BYTES) await send();
    }
  };
  for await (const { dir, base, names, stats } of walkContained(root, start)) {
    const known = cache.folder(dir, base);
    const dirBase = childOf(dir, '');
    for (let i = 0; i < names.length; i++) {
      // Most files of a listing are known already: their line is written at once, in order.
      const file = known.known(names[i]!, stats[i]!);
      if (file && window.length === 0) {
        add(file);
        if (chunk.length >= CHUNK_BYTES) await send();
        continue;
      }
      // A file removed between the walk and the read is simply not listed. A known line is taken
      // now: the cache's entry is rewritten when another listing names the file from another root.
      window.push(
        file
          ? Promise.resolve({ line: file.line, bytes: file.bytes })
          : cache.digest(`${dirBase}${names[i]!}`, stats[i]!, base).catch(() => undefined),
      );
      await flush(HASH_CONCURRENCY);
    }
  }
  await flush(0);
  chunk += `${JSON.stringify({ done: true, files, bytes, ...trailer })}\n`;
  await send();
  res.end();
}
