import path from 'node:path';
import { isTemporaryFileName } from '@ack/host';

/** A folder served under a URL prefix (`/view/` for contract screens, `/` for the static root). */
export interface ServedFolder {
  root: string;
  /** URL prefix with leading and trailing `/`. */
  prefix: string;
}

/**
 * The URL paths at which a file on disk is served (docs/live-reload.md): under each folder that
 * holds it, and at each shared-file request path that names it. Paths come percent-encoded as a
 * browser shows them. A temporary file of a safe write maps to nothing: only its final name counts.
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
  return (absolute) => {
    const file = path.resolve(absolute);
    if (isTemporaryFileName(path.basename(file))) return [];
    const out: string[] = [];
    for (const folder of folders) {
      const relative = path.relative(folder.root, file);
      if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) continue;
      out.push(encodeURI(folder.prefix + relative.split(path.sep).join('/')));
    }
    for (const requestPath of byFile.get(file) ?? []) out.push(encodeURI(requestPath));
    return out;
  };
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
