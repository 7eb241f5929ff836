import fs from 'node:fs/promises';
import path from 'node:path';
import { releaseDir, treeFiles, type PrefixPaths } from './layout.js';

/**
 * The files a switch from release `from` to `to` changes, as paths under the prefix's live link
 * (docs/releases.md "Refresh and live reload"): created, replaced and removed ones. A file a stage
 * did not touch is a hard link of the same inode in both releases, so this needs no hashing.
 */
export async function switchChanges(p: PrefixPaths, from: string | undefined, to: string): Promise<string[]> {
  const inodes = async (id: string | undefined) => {
    const map = new Map<string, number>();
    if (id === undefined) return map;
    const root = releaseDir(p, id);
    const files = await treeFiles(root).catch(() => [] as string[]);
    for (const f of files) {
      const stat = await fs.stat(path.join(root, f)).catch(() => undefined);
      if (stat) map.set(f, stat.ino);
    }
    return map;
  };
  const [before, after] = await Promise.all([inodes(from), inodes(to)]);
  const changed = new Set<string>();
  for (const [f, ino] of after) if (before.get(f) !== ino) changed.add(f);
  for (const f of before.keys()) if (!after.has(f)) changed.add(f);
  return [...changed].sort().map((f) => path.join(p.link, ...f.split('/')));
}
