import fs from 'node:fs';
import path from 'node:path';

/**
 * The on-disk half of the containment rule (docs/static-files.md, lookup rule 5): what is sent must
 * have its real path (symlinks followed) inside the real path of the folder it is served from. One
 * check for every file the serving layer sends: a looked-up file, a precompressed sidecar, and (for
 * live reload) a file whose URL is announced.
 */

/** The real path of `absolute` (symlinks followed), or undefined when it cannot be resolved. */
export function realPathOf(absolute: string): string | undefined {
  try {
    return fs.realpathSync.native(absolute);
  } catch {
    return undefined;
  }
}

/** Whether the real path of `absolute` is `realRoot` or inside it (a dangling symlink is not). */
export function isInsideReal(absolute: string, realRoot: string): boolean {
  const target = realPathOf(absolute);
  return target !== undefined && (target === realRoot || target.startsWith(realRoot + path.sep));
}
