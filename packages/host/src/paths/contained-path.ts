import fs from 'node:fs/promises';
import path from 'node:path';

/** Why a relative path was refused. */
export type PathRejection = 'empty' | 'nul' | 'drive-letter' | 'unc' | 'traversal' | 'outside-root' | 'symlink-escape';

export type ContainedPath =
  | { ok: true; absolute: string; relative: string }
  | { ok: false; reason: PathRejection };

/**
 * The single resolver for "a path a client names, inside a folder we own". Accepts `/` or `\`
 * separators and drops a leading `/` (clients send `/HDS/x` meaning `HDS/x`). Refuses NUL, drive
 * letters, UNC prefixes and any `..` segment: a path is refused rather than clamped, so a client
 * never writes somewhere it did not mean. Purely lexical; see `checkNoSymlinkEscape` for the disk.
 *
 * `relative` must already be percent-decoded by the caller (URL paths are decoded once, at the edge
 * of the static handler).
 */
export function resolveContainedPath(root: string, relative: string): ContainedPath {
  if (relative.includes('\0')) return { ok: false, reason: 'nul' };
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
 * Checks that following symlinks from `root` to `absolute` stays inside `root`: the real path of the
 * deepest part of `absolute` that exists must lie within the real path of `root`.
 */
export async function checkNoSymlinkEscape(root: string, absolute: string): Promise<boolean> {
  const realRoot = await fs.realpath(root);
  let probe = absolute;
  for (;;) {
    try {
      const real = await fs.realpath(probe);
      return real === realRoot || real.startsWith(realRoot + path.sep);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const parent = path.dirname(probe);
      if (parent === probe) return false;
      probe = parent;
    }
  }
}
