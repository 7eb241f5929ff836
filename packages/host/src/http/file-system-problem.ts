import type { Problem } from './problem.js';
import { hostProblems } from './problem-codes.js';

/**
 * File-system errors that a client's path causes (a name too long, a file where the path needs a
 * folder, a folder where it needs a file, a symbolic link that loops) are the client's to fix: 4xx,
 * not 500. A full disk or quota is 507 `storage.full` (the writer has removed its temporary file by
 * then; docs/sync.md).
 * The detail never names the server's own path. Other errors of the server's making stay 500.
 */
export function fileSystemProblem(err: unknown): Problem | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (!e || typeof e.code !== 'string' || typeof e.syscall !== 'string') return undefined;
  switch (e.code) {
    case 'ENAMETOOLONG':
      return {
        status: 400,
        code: hostProblems.REQUEST_PATH_TOO_LONG.code,
        detail: 'A name in the path is too long for the file system.',
      };
    case 'ENOTDIR':
      return {
        status: 409,
        code: hostProblems.REQUEST_PATH_CONFLICT.code,
        detail: 'A part of the path is a file, not a folder.',
      };
    case 'EEXIST':
      return e.syscall === 'mkdir'
        ? {
            status: 409,
            code: hostProblems.REQUEST_PATH_CONFLICT.code,
            detail: 'A part of the path is a file, not a folder.',
          }
        : undefined;
    case 'ELOOP':
      return {
        status: 409,
        code: hostProblems.REQUEST_PATH_CONFLICT.code,
        detail: 'The path passes through a symbolic link that loops.',
      };
    case 'EISDIR':
      return {
        status: 409,
        code: hostProblems.REQUEST_PATH_CONFLICT.code,
        detail: 'The path names a folder, not a file.',
      };
    case 'ENOSPC':
    case 'EDQUOT':
      return {
        status: 507,
        code: hostProblems.STORAGE_FULL.code,
        detail: 'The server has no room left to store this; nothing was changed.',
      };
    default:
      return undefined;
  }
}
