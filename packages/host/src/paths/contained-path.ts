import { lstatSync, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Why a relative path was refused. */
export type PathRejection =
  'empty' | 'nul' | 'control-character' | 'drive-letter' | 'unc' | 'traversal' | 'outside-root' | 'symlink-escape';

export type ContainedPath = { ok: true; absolute: string; relative: string } | { ok: false; reason: PathRejection };

// C0 controls, DEL and the C1 controls; space (U+0020) and no-break space (U+00A0) are names' own.
const CONTROL_CHARACTER = /[\u0001-\u001f\u007f-\u009f]/;

/**
 * The single resolver for "a path a client names, inside a folder we own". Accepts `/` or `\`
 * separators and drops a leading `/` (clients send `/HDS/x` meaning `HDS/x`). Refuses NUL, the
 * other control characters (C0, DEL, C1: a name no one can type, that breaks terminals and logs and
 * that some file systems refuse), drive letters, UNC prefixes and any `..` segment: a path is
 * refused rather than clamped, so a client never writes somewhere it did not mean. Purely lexical;
 * see `checkNoSymlinkEscape` for the disk.
 *
 * `relative` must already be percent-decoded by the caller (URL paths are decoded once, at the edge
 * of the static handler).
 */
export function resolveContainedPath(root: string, relative: string): ContainedPath {
  if (relative.includes('\0')) return { ok: false, reason: 'nul' };
  if (CONTROL_CHARACTER.test(relative)) return { ok: false, reason: 'control-character' };
  const slashed = relative.replace(/\\/g, '/');
  if (slashed.startsWith('//')) return { ok: false, reason: 'unc' };
  const trimmed = slashed.replace(/^\/+/, '');
  if (/^[A-Za-z]:/.test(trimmed)) return { ok: false, reason: 'drive-letter' };
  const segments: string[] = [];
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return { ok: false, reason: 'traversal' };
    segments.push(segment);
  }
  if (segments.length === 0) return { ok: false, reason: 'empty' };
  const base = path.resolve(root);
  const absolute = path.join(base, ...segments);
  if (absolute !== base && !absolute.startsWith(base + path.sep)) return { ok: false, reason: 'outside-root' };
  return { ok: true, absolute, relative: segments.join('/') };
}

/**
 * Real paths of folders already resolved, kept by a caller that checks many paths at once (a batch
 * of uploads into a few folders): each folder is resolved once per batch rather than once per file.
 */
export type RealFolders = Map<string, Promise<string>>;

/**
 * Checks that following symlinks from `root` to `absolute` stays inside `root`: the real path of the
 * deepest part of `absolute` that exists must lie within the real path of `root`. `root` need not
 * exist yet (a target folder a write will create): its real path is that of its deepest existing
 * folder plus the rest. `folders`, when given, keeps the real paths of folders between calls (the
 * path itself is always resolved anew: it may be a symlink).
 */
export async function checkNoSymlinkEscape(root: string, absolute: string, folders?: RealFolders): Promise<boolean> {
  const realRoot = await realFolder(path.resolve(root), folders);
  const target = path.resolve(absolute);
  const parent = path.dirname(target);
  if (folders && parent !== target) {
    // With the folder's real path known, only whether the path itself is a symlink is left to ask:
    // one local lstat (microseconds, as the listing's stats), not a thread-pool round trip per file.
    const own = lstatQuiet(target);
    if (!own?.isSymbolicLink()) {
      const real = path.join(await realFolder(parent, folders), path.basename(target));
      return real === realRoot || real.startsWith(realRoot + path.sep);
    }
  }
  let real: string;
  try {
    real = await fs.realpath(target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    real = parent === target ? target : path.join(await realFolder(parent, folders), path.basename(target));
  }
  return real === realRoot || real.startsWith(realRoot + path.sep);
}

/** The path's own facts (a symlink not followed), or undefined when nothing is there (or a file is in its way). */
function lstatQuiet(p: string): Stats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch (err) {
    // ENOTDIR: a file where a folder of the path should be, as for ENOENT.
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

function realFolder(dir: string, folders: RealFolders | undefined): Promise<string> {
  if (!folders) return realpathOfExisting(dir);
  let real = folders.get(dir);
  if (!real) {
    real = realpathOfExisting(dir);
    folders.set(dir, real);
    real.catch(() => folders.delete(dir));
  }
  return real;
}

/** Real path of the deepest existing part of `p`, with the parts that do not exist appended. */
async function realpathOfExisting(p: string): Promise<string> {
  const rest: string[] = [];
  let probe = p;
  for (;;) {
    try {
      return path.join(await fs.realpath(probe), ...rest);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = path.dirname(probe);
      if (parent === probe) return p;
      rest.unshift(path.basename(probe));
      probe = parent;
    }
  }
}
