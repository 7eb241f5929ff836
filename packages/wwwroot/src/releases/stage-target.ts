import fs from 'node:fs/promises';
import { ProblemError } from '@ack/host';
import { wwwrootProblems } from '../problem-codes.js';
import type { WwwrootRuntime } from '../runtime.js';
import { contractFolderOf } from '../sync/module-folders.js';
import { ReleaseError, checkReleaseId, parsePrefix, prefixPaths, stagingDir } from './layout.js';

// `?release=<id>&path=<prefix>` on the sync batch and listing (docs/wire-formats.md "Sync releases"):
// the same upload flow and listing, rooted in a staged release instead of the contract folder.

/**
 * The staging folder a batch or listing names, or undefined when it names none (no `release`).
 * Refused as problem+json: a bad id or prefix, no such staging, releases not enabled.
 */
export async function stagedFolderOf(
  runtime: WwwrootRuntime,
  module: string,
  query: Map<string, string>,
): Promise<string | undefined> {
  const id = query.get('release');
  if (id === undefined) return undefined;
  try {
    if (!runtime.settings.releasesEnabled) {
      throw new ReleaseError(
        wwwrootProblems.RELEASE_NOT_STAGED,
        'Releases are not enabled on this host (ModuleConfig:IsEnabledReleases).',
      );
    }
    checkReleaseId(id);
    const p = prefixPaths(await contractFolderOf(runtime, module), parsePrefix(query.get('path') ?? ''));
    const dir = stagingDir(p, id);
    const st = await fs.stat(dir).catch(() => null);
    if (!st?.isDirectory())
      throw new ReleaseError(wwwrootProblems.RELEASE_NOT_STAGED, `no release ${id} of ${p.prefix} is being staged`);
    return dir;
  } catch (err) {
    if (err instanceof ReleaseError)
      throw new ProblemError({ status: err.status, code: err.code, detail: err.message });
    throw err;
  }
}
