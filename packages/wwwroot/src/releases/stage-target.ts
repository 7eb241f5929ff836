import fs from 'node:fs/promises';
import { ProblemError } from '@ack/host';
import { wwwrootProblems } from '../problem-codes.js';
import type { WwwrootRuntime } from '../runtime.js';
import { contractFolderOf } from '../sync/module-folders.js';
import { releaseStoreOf } from './stores.js';
import { ReleaseError, checkReleaseId, parsePrefix, prefixPaths, stageNotePath, stagingDir } from './layout.js';

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
    // The stage is in use: not abandoned (docs/releases.md "Crash safety").
    const now = new Date();
    await fs.utimes(stageNotePath(p, id), now, now).catch(() => undefined);
    return dir;
  } catch (err) {
    if (err instanceof ReleaseError)
      throw new ProblemError({ status: err.status, code: err.code, detail: err.message });
    throw err;
  }
}

/**
 * Tells the release store the digests of files a batch or PUT just wrote into a stage, so that the
 * commit need not read them again (docs/releases.md "Manifest and history").
 */
export async function noteStagedWrites(
  runtime: WwwrootRuntime,
  module: string,
  query: Map<string, string>,
  written: ReadonlyArray<{ absolute: string; sha256: string; bytes: number }>,
): Promise<void> {
  const id = query.get('release');
  if (id === undefined || written.length === 0) return;
  const store = releaseStoreOf(runtime, await contractFolderOf(runtime, module));
  store.noteStaged(query.get('path') ?? '', id, written);
}
