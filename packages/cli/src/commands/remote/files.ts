import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isIgnoredName } from './path-mapping.js';

/** SHA-256 of a file, read as a stream. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
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
