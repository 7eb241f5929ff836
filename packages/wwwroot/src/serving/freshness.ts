import fs from 'node:fs';
import path from 'node:path';

/**
 * Knowing that a cached file is still current without asking the disk on every request: each
 * folder holding a cached file, and every folder above it, is watched (`fs.watch`, inotify on
 * Linux, which also sees writes by other processes). A stamp taken before a file is read records
 * the change counters of those folders; while none moved, the file and the path to it are as
 * they were, so a hit costs no system call. Any event (a write, a rename, a folder replaced
 * above) moves a counter, and the next request validates by `stat` as before. A folder that cannot
 * be watched (no inotify watches left, an unsupported file system) gives no stamp: files in it
 * are validated by `stat` on every request. See docs/static-files.md.
 */
export interface Stamp {
  /** Total change count when last confirmed; equal to the current total means nothing moved. */
  seen: number;
  readonly folders: readonly Folder[];
  readonly versions: readonly number[];
}

interface Folder {
  readonly dir: string;
  version: number;
  alive: boolean;
  watcher: fs.FSWatcher | undefined;
}

export interface Freshness {
  /** Watches `dir` and the folders above it; a stamp of their state, or undefined when one cannot be watched. Take it before reading. */
  stamp(dir: string): Stamp | undefined;
  /** True while no change was seen in the stamped folders since the stamp was taken. */
  unchanged(stamp: Stamp): boolean;
  /** Folders watched now. */
  watched(): number;
  close(): void;
}

export function createFreshness(maxFolders = 4_096): Freshness {
  const folders = new Map<string, Folder>();
  let changes = 0;
  let closed = false;

  const drop = (folder: Folder) => {
    folder.alive = false;
    folder.watcher?.close();
    folders.delete(folder.dir);
    changes++;
  };

  /** A folder replaced or removed: its watcher follows the old inode, so it and those below go. */
  const dropTree = (dir: string) => {
    const prefix = dir + path.sep;
    for (const folder of [...folders.values()]) if (folder.dir === dir || folder.dir.startsWith(prefix)) drop(folder);
  };

  const watch = (dir: string): Folder | undefined => {
    const known = folders.get(dir);
    if (known) return known;
    if (closed || folders.size >= maxFolders) return undefined;
    const folder: Folder = { dir, version: 0, alive: true, watcher: undefined };
    try {
      folder.watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        folder.version++;
        changes++;
        if (typeof name === 'string' && name !== '') {
          const child = path.join(dir, name);
          if (folders.has(child)) dropTree(child);
        } else dropTree(dir);
      });
    } catch {
      return undefined;
    }
    folder.watcher.on('error', () => drop(folder));
    folders.set(dir, folder);
    return folder;
  };

  return {
    stamp(dir) {
      const chain: Folder[] = [];
      let current = path.resolve(dir);
      for (;;) {
        const folder = watch(current);
        if (!folder) return undefined;
        chain.push(folder);
        const parent = path.dirname(current);
        if (parent === current) break;
        current = parent;
      }
      return { seen: changes, folders: chain, versions: chain.map((f) => f.version) };
    },
    unchanged(stamp) {
      if (stamp.seen === changes) return true;
      const { folders: chain, versions } = stamp;
      for (let i = 0; i < chain.length; i++) {
        const folder = chain[i]!;
        if (!folder.alive || folder.version !== versions[i]) return false;
      }
      stamp.seen = changes;
      return true;
    },
    watched: () => folders.size,
    close() {
      closed = true;
      for (const folder of [...folders.values()]) drop(folder);
    },
  };
}
