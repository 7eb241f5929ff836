import type { Request } from 'express';
import { ProblemError, resolveContainedPath } from '@ack/host';
import {
  checkNoSymlinkEscape,
  fileSystemProblem,
  parseContractType,
  type ProblemCode,
  type RealFolders,
} from '@ack/host/serving';
import { wwwrootProblems } from '../problem-codes.js';
import type { WwwrootRuntime } from '../runtime.js';
import { contractFolderOf } from './module-folders.js';

/** A 400 sync problem (docs/sync.md). */
export const bad = (problem: ProblemCode & { status: 400 }, detail: string) =>
  new ProblemError({ status: problem.status, code: problem.code, detail });

/** `moduleName` as upload, listing and batch read it (any case); a 400 when missing or unknown. */
export function parseModuleName(text: string | undefined): string {
  const trimmed = text?.trim();
  if (!trimmed) throw bad(wwwrootProblems.SYNC_MISSING_FIELD, 'The field moduleName is required.');
  const module = parseContractType(trimmed);
  if (!module)
    throw bad(
      wwwrootProblems.SYNC_INVALID_MODULE,
      'moduleName must be one of dbclient, graphclient, function, transact, command, prompter, repository, wwwroot.',
    );
  return module;
}

/**
 * A path a client names inside a module's contract folder, through the one resolver uploads use
 * (lexical check, then no symlink leading out): 400 `sync.invalid_path` when it leaves the folder.
 * A batch passes `folders` to resolve each folder once for all its files.
 */
export async function resolveInFolder(
  folder: string,
  filePath: string,
  folders?: RealFolders,
): Promise<{ relative: string; absolute: string }> {
  const resolved = resolveContainedPath(folder, filePath);
  if (!resolved.ok)
    throw bad(
      wwwrootProblems.SYNC_INVALID_PATH,
      `filePath is refused (${resolved.reason}): it must stay inside the module's contract folder.`,
    );
  if (!(await insideFolder(folder, resolved.absolute, folders)))
    throw bad(
      wwwrootProblems.SYNC_INVALID_PATH,
      "filePath is refused (symlink-escape): it must stay inside the module's contract folder.",
    );
  return { relative: resolved.relative, absolute: resolved.absolute };
}

/**
 * The symlink check, a path the file system refuses on the way (a name too long) being a 4xx
 * `ProblemError` of its own, so that a batch refuses that entry alone.
 */
async function insideFolder(folder: string, absolute: string, folders: RealFolders | undefined): Promise<boolean> {
  try {
    return await checkNoSymlinkEscape(folder, absolute, folders);
  } catch (err) {
    const problem = fileSystemProblem(err);
    if (problem && problem.status < 500) throw new ProblemError(problem);
    throw err;
  }
}

/** The module's contract folder and a path in it, resolved as an upload resolves its target. */
export async function resolveModulePath(
  runtime: WwwrootRuntime,
  module: string,
  filePath: string,
  folders?: RealFolders,
): Promise<{ folder: string; relative: string; absolute: string }> {
  const folder = await contractFolderOf(runtime, module);
  return { folder, ...(await resolveInFolder(folder, filePath, folders)) };
}

/** Query parameters by lower-cased name, the first of each (the refresh route and the listing read them so). */
export function queryOf(req: Request): Map<string, string> {
  const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
  return new Map([...query].map(([k, v]) => [k.toLowerCase(), v] as const).reverse());
}
