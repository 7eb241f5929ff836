import path from 'node:path';

/** Joins a remote folder prefix and a relative path with `/`, no leading or doubled `/`. */
export function joinRemote(prefix: string | undefined, relative: string): string {
  const parts = [prefix ?? '', relative]
    .join('/')
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  return parts.join('/');
}

/**
 * The remote path of a local file inside a folder being synced: its path relative to the folder,
 * `/` separated, under `prefix`. Undefined when the file is not inside the folder.
 */
export function remotePathFor(root: string, file: string, prefix?: string): string | undefined {
  const relative = path.relative(path.resolve(root), path.resolve(file));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return joinRemote(prefix, relative.split(path.sep).join('/'));
}

/** Files and folders a folder sync leaves alone: dotfiles and dot-folders (.git, .DS_Store), editor leftovers. */
export function isIgnoredName(name: string): boolean {
  return name.startsWith('.') || name.endsWith('~') || /\.(swp|swx|tmp)$/i.test(name);
}

/** True when any segment of a relative path is ignored. */
export function isIgnoredPath(relative: string): boolean {
  return relative.split(/[\\/]/).some((segment) => segment !== '' && isIgnoredName(segment));
}

/**
 * wwwroot serves contract screens from `<ContractBasePath>/<ApplicationID>/...` under `/view/`: a
 * file uploaded to the contract folder's top level is stored but never served. Says so, once.
 */
export function applicationFolderHint(module: string, remotePaths: readonly string[]): string | undefined {
  if (module.toLowerCase() !== 'wwwroot') return undefined;
  const top = remotePaths.filter((p) => p !== '' && !p.includes('/'));
  if (top.length === 0) return undefined;
  return `hint: ${top[0]}${top.length > 1 ? ` and ${top.length - 1} more` : ''} would sit at the top of the wwwroot contract folder, which is not served: screens live under an ApplicationID folder (e.g. --path HDS/${top[0]} serves /view/${top[0]} when the ApplicationID is HDS)`;
}
