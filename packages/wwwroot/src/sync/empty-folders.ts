import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * After a deletion: the folders it left empty are removed too, upward, never `stopAt` (the
 * contract folder) itself (docs/sync.md "The delta"). `rmdir` removes only an empty folder, and
 * fails on a symbolic link (a release prefix), which ends the walk; so does any other error.
 */
export async function removeEmptyParents(file: string, stopAt: string): Promise<void> {
  const root = path.resolve(stopAt);
  let dir = path.dirname(path.resolve(file));
  while (dir !== root && dir.startsWith(root + path.sep)) {
    try {
      await fs.rmdir(dir);
    } catch {
      return;
    }
    dir = path.dirname(dir);
  }
}
