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

/**
 * Every file under `root` (relative paths, `/` separated, sorted), leaving out ignored names.
 * Symlinked files are followed; symlinked folders are not (no loops).
 */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for (const entry of await fs.promises.readdir(dir, { withFileTypes: true })) {
      if (isIgnoredName(entry.name)) continue;
      const abs = path.join(dir, entry.name);
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(abs, rel);
      else if (entry.isFile()) out.push(rel);
      else if (entry.isSymbolicLink()) {
        const stat = await fs.promises.stat(abs).catch(() => undefined);
        if (stat?.isFile()) out.push(rel);
      }
    }
  };
  await walk(root, '');
  return out.sort();
}
