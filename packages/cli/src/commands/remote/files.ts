import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isIgnoredName } from './path-mapping.js';

/** Files up to this size are read in one call; bigger ones are streamed. */
const READ_WHOLE_BYTES = 1024 * 1024;

/**
 * Size and SHA-256 of a file, both from one open (so they describe the same file). A small file is
 * read whole, which costs a fraction of a stream's set-up: a folder of thousands of small files is
 * hashed at disk speed (docs/sync.md "The delta").
 */
export async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const hash = createHash('sha256');
    if (size <= READ_WHOLE_BYTES) {
      const data = await handle.readFile();
      return { size: data.length, sha256: hash.update(data).digest('hex') };
    }
    let read = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
      read += chunk.length;
      hash.update(chunk);
    }
    return { size: read, sha256: hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

/** SHA-256 of a file. */
export async function sha256File(file: string): Promise<string> {
  return (await hashFile(file)).sha256;
}

/** A file of a folder being synced, with the facts that tell whether it changed since it was hashed. */
export interface ScannedFile {
  /** Relative path, `/` separated. */
  rel: string;
  /** Absolute local path. */
  abs: string;
  size: number;
  /** Modification and change times, in ms with their sub-millisecond part (as `fs.Stats` has them). */
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** A file gone since its folder was read is no error (one options object for thousands of calls). */
const MAYBE_GONE = { throwIfNoEntry: false } as const;

/**
 * Every file under `root` with its stat facts, ignored names left out, in the order a host lists
 * them (docs/wire-formats.md "Sync listing"): folder by folder, each folder's names in code-unit
 * order, a folder's files where its name sorts. So an unchanged folder and its listing can be
 * compared whole (docs/sync.md "Speed").
 *
 * Symlinked files are followed; symlinked folders are not (no loops). A file that goes away while
 * the folder is read is left out. Each folder is read with plain synchronous calls, which cost a
 * short-lived command far less than a promise per file, and the event loop gets a turn between
 * folders, so that requests already started (the hosts' listings) go on meanwhile. A folder's
 * names are read as plain strings and sorted as such (the default sort is code-unit order), and
 * each entry's one `lstat` tells a file from a folder or a link: no `Dirent` per entry, no
 * comparison function called thousands of times.
 */
export async function scanFolder(root: string): Promise<ScannedFile[]> {
  const out: ScannedFile[] = [];
  const walk = async (dir: string, prefix: string) => {
    await new Promise((resolve) => setImmediate(resolve));
    // A name read from a folder holds no separator: joined as it is, not through path.join.
    const base = dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`;
    for (const name of fs.readdirSync(dir).sort()) {
      if (isIgnoredName(name)) continue;
      const abs = `${base}${name}`;
      const rel = prefix ? `${prefix}/${name}` : name;
      let stat = fs.lstatSync(abs, MAYBE_GONE);
      if (stat === undefined) continue;
      if (stat.isDirectory()) {
        await walk(abs, rel);
        continue;
      }
      // A link is followed to a file only (a link to a folder is skipped, as are sockets and the like).
      if (stat.isSymbolicLink()) stat = fs.statSync(abs, MAYBE_GONE);
      if (!stat?.isFile()) continue;
      out.push({ rel, abs, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino });
    }
  };
  await walk(root, '');
  return out;
}

/** Every file under `root` (relative paths, `/` separated, in listing order), leaving out ignored names. */
export async function listFiles(root: string): Promise<string[]> {
  return (await scanFolder(root)).map((f) => f.rel);
}
