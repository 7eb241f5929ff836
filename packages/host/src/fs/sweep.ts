import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isTemporaryFileName } from './safe-write.js';
import { namespaceTag, writerGone } from './temp-owner.js';

const TAG = namespaceTag();

/**
 * Removes temporary files that a safe write left behind when the process died mid-write (a clean
 * failure never leaves one). A file goes when its writer has provably ended (`writerGone`: a
 * process of this machine that no longer runs), else only when older than `olderThanMs`, so a
 * write in flight in another host or worker sharing the folder is never touched. Symlinks are not
 * followed. Returns what went.
 */
export async function sweepTemporaryFiles(
  root: string,
  olderThanMs = 10 * 60_000,
  now = Date.now(),
  gone: (name: string) => boolean = (name) => writerGone(name, TAG),
): Promise<string[]> {
  const removed: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && isTemporaryFileName(entry.name)) {
        try {
          const stat = await fs.stat(full);
          if (gone(entry.name) || now - stat.mtimeMs >= olderThanMs) {
            await fs.unlink(full);
            removed.push(full);
          }
        } catch {
          // Gone already, or not ours to remove: leave it.
        }
      }
    }
  };
  await walk(root);
  return removed;
}
