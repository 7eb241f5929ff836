import fs from 'node:fs';
import path from 'node:path';
import { isTemporaryFileName } from '@ack/host/serving';
import { isInsideReal, realPathOf } from '../serving/containment.js';
import { refuseSegments } from '../serving/url-path.js';

/** A folder served under a URL prefix (`/view/` for contract screens, `/` for the static root). */
export interface ServedFolder {
  root: string;
  /** URL prefix with leading and trailing `/`. */
  prefix: string;
}

/**
 * The URL paths at which a file on disk is served (docs/live-reload.md): under the first folder
 * whose prefix owns its URL (as the static handler picks: the static root never answers under the
 * contract prefix), and at each shared-file request path that names it. Only what the host would
 * serve is announced: the URL must pass the lookup rules (no dotfile outside `/.well-known/`, no
 * name a URL cannot reach) and a file still on disk must be a regular file whose real path is inside
 * the folder (a symlink pointing out is never named). A file removed is announced, its URL served
 * it until then. Paths come percent-encoded as a browser shows them. A temporary file of a safe
 * write maps to nothing: only its final name counts.
 */
export function createServedPathMap(
  folders: readonly ServedFolder[],
  shared: ReadonlyArray<{ requestPath: string; hostFilePath: string }>,
): (absolute: string) => string[] {
  const byFile = new Map<string, string[]>();
  for (const item of shared) {
    const key = path.resolve(item.hostFilePath);
    byFile.set(key, [...(byFile.get(key) ?? []), item.requestPath]);
  }
  const prefixes = folders.map((folder) => folder.prefix.split('/').filter(Boolean));
  const owner = (segments: readonly string[]) =>
    prefixes.findIndex((prefix) => prefix.every((p, i) => segments[i]?.toLowerCase() === p.toLowerCase()));
  return (absolute) => {
    const file = path.resolve(absolute);
    if (isTemporaryFileName(path.basename(file))) return [];
    const out: string[] = [];
    folders.forEach((folder, index) => {
      const relative = path.relative(folder.root, file);
      if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return;
      const segments = [...prefixes[index]!, ...relative.split(path.sep)];
      if (owner(segments) !== index || refuseSegments(segments) || !servable(file, folder.root)) return;
      out.push(encodePath(segments));
    });
    for (const requestPath of byFile.get(file) ?? []) out.push(encodeURI(requestPath));
    return out;
  };
}

/** A file gone is announced; one still there must be a regular file inside the folder, on disk. */
function servable(file: string, root: string): boolean {
  if (!fs.lstatSync(file, { throwIfNoEntry: false })) return true;
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
  const realRoot = realPathOf(root);
  return realRoot !== undefined && isInsideReal(file, realRoot);
}

/** As a browser shows the path; `?` and `#` are part of a file name here, never a query or fragment. */
function encodePath(segments: readonly string[]): string {
  return encodeURI('/' + segments.join('/')).replace(/[?#]/g, (c) => encodeURIComponent(c));
}

/** The folders shared-file targets live in, with the file names watched in each. */
export function sharedFileFolders(shared: ReadonlyArray<{ hostFilePath: string }>): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const item of shared) {
    const file = path.resolve(item.hostFilePath);
    const names = folders.get(path.dirname(file)) ?? new Set<string>();
    names.add(path.basename(file));
    folders.set(path.dirname(file), names);
  }
  return folders;
}
