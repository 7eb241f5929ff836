import fs from 'node:fs';
import path from 'node:path';
import { resolveContainedPath } from '@ack/host';
import { isInsideReal, realPathOf } from './containment.js';
import type { DirectoryIndex } from './dir-index.js';
import type { FileFacts, FileStore } from './file-store.js';

/** What a URL names in a served folder: a file (with the resolution to remember), a folder, or nothing. */
export type FolderResult =
  { kind: 'file'; facts: FileFacts; resolution: Resolution } | { kind: 'directory' } | { kind: 'none' };

/** How a URL was mapped to a file, kept so the next request for the same URL skips the walk. */
export interface Resolution {
  absolute: string;
  /** The folder it was found in: the served folder, or the release its symlink named then. */
  root: string;
  /** Inode whose real path was checked to be inside the folder. */
  ino: number;
  /** Folders whose listing decided a case-insensitive step, with the mtime they had. */
  folded: ReadonlyArray<readonly [string, number]> | undefined;
}

/**
 * A folder served under a URL prefix (the static root under `/`, contract screens under
 * `/{ContractRequestPath}`): maps decoded URL segments to a file inside it, case-insensitively,
 * never outside it (lexically via `resolveContainedPath`, on disk via the real path, so a symlink
 * pointing out is not followed).
 */
export interface ServedFolder {
  readonly root: string;
  /** Full walk: exact name first in each folder, else the case-insensitive choice. */
  resolve(segments: readonly string[], wantIndex: boolean): FolderResult;
  /** Re-validates a remembered resolution; the facts when it still holds. */
  revalidate(resolution: Resolution): FileFacts | undefined;
}

export function createServedFolder(root: string, dirs: DirectoryIndex, store: FileStore): ServedFolder {
  const base = path.resolve(root);
  // A served folder that is a symlink (a release folder a deploy switches, `ln -sfn` / `mv -T`)
  // is walked through the folder it names now, read by one readlink per request: every cache is
  // keyed by that folder's paths, so none can answer from the old release, and the switch is seen
  // on the very next request, before the folder watch's event arrives (docs/static-files.md
  // "Symlinked release folders"). A plain folder pays nothing for this.
  const linked = fs.lstatSync(base, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  let lastTarget = '';
  let lastRoot = base;
  const rootNow = (): string => {
    if (!linked) return base;
    let target: string;
    try {
      target = fs.readlinkSync(base);
    } catch {
      return base;
    }
    if (target !== lastTarget) {
      lastTarget = target;
      lastRoot = path.resolve(path.dirname(base), target);
    }
    return lastRoot;
  };

  return {
    root: base,
    resolve(segments, wantIndex) {
      const top = rootNow();
      let current = top;
      let folded: Array<readonly [string, number]> | undefined;
      const step = (segment: string): boolean => {
        const picked = dirs.pick(current, segment);
        if (!picked) return false;
        if (picked.name !== segment) (folded ??= []).push([current, picked.mtimeMs]);
        current = path.join(current, picked.name);
        return true;
      };
      for (const segment of segments) if (!step(segment)) return { kind: 'none' };
      // The stamp of the file's folder is taken before its stat (see freshness.ts).
      let stamp = store.stamp(path.dirname(current));
      let st = fs.statSync(current, { throwIfNoEntry: false });
      // `/file.txt/` names a folder that is not there (relative links from it would be wrong).
      if (wantIndex && segments.length > 0 && st?.isFile()) return { kind: 'none' };
      if (st?.isDirectory()) {
        if (!wantIndex) return { kind: 'directory' };
        stamp = store.stamp(current);
        if (!step('index.html')) return { kind: 'none' };
        st = fs.statSync(current, { throwIfNoEntry: false });
      }
      if (!st?.isFile()) return { kind: 'none' };
      // Lexically inside (checked once a file is found, so a miss pays nothing for it), then on disk.
      if (segments.length > 0 && !resolveContainedPath(top, segments.join('/')).ok) return { kind: 'none' };
      const real = realPathOf(top);
      if (!real || !isInsideReal(current, real)) return { kind: 'none' };
      const facts = store.lookup(current, top, { stat: st, stamp }, linked);
      if (!facts) return { kind: 'none' };
      return { kind: 'file', facts, resolution: { absolute: current, root: top, ino: facts.ino, folded } };
    },
    revalidate(resolution) {
      if (resolution.root !== rootNow()) return undefined;
      if (resolution.folded) {
        for (const [dir, mtimeMs] of resolution.folded) if (!dirs.unchanged(dir, mtimeMs)) return undefined;
      }
      const facts = store.lookup(resolution.absolute, resolution.root, undefined, linked);
      return facts && facts.ino === resolution.ino ? facts : undefined;
    },
  };
}
