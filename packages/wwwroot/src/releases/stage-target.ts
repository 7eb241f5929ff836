import fs from 'node:fs/promises';
import { ProblemError } from '@ack/host';
import { wwwrootProblems } from '../problem-codes.js';
import { checkReleaseId, parsePrefix, prefixPaths, ReleaseError, stagingDir } from './layout.js';

/**
 * A release being staged that an upload or a batch writes into instead of the live files
 * (docs/releases.md "Pushing into a stage"): the query's `release=<id>` and `releasePath=<prefix>`.
 */
export interface StageTarget {
  /** `HDS/TST/`: every path the request names must lie under it. */
  prefix: string;
  /** The staging folder, which stands for the prefix's folder. */
  folder: string;
}

/** The stage a request names in its query (lower-cased names), or undefined when it names none. */
export async function stageFromQuery(
  contractDir: string,
  query: ReadonlyMap<string, string>,
): Promise<StageTarget | undefined> {
  const id = query.get('release');
  if (id === undefined) return undefined;
  try {
    const p = prefixPaths(contractDir, parsePrefix(query.get('releasepath') ?? ''));
    const folder = stagingDir(p, checkReleaseId(id));
    const stat = await fs.lstat(folder).catch(() => undefined);
    if (!stat?.isDirectory())
      throw new ReleaseError(wwwrootProblems.RELEASE_NOT_STAGED, `no release ${id} is being staged for ${p.prefix}`);
    return { prefix: p.prefix, folder };
  } catch (err) {
    if (err instanceof ReleaseError)
      throw new ProblemError({ status: err.status, code: err.code, detail: err.message });
    throw err;
  }
}
