import path from 'node:path';
import type { DigestCache } from '../sync/digest-cache.js';
import type { ReleaseManifest, ReleaseStore } from './store.js';
import { statFiles, statTree } from './tree-digest.js';

/**
 * After a switch (a commit or a rollback), the listing's digest cache learns the live release's
 * files from the digests kept beside the release, under the facts the files have now
 * (docs/releases.md "The listing after a switch"). Without it the first listing after every
 * release read the whole tree again: a stage's hard links and a prune's removals move the ctime
 * of every file they share, and the cache takes a moved ctime for an edit. A file is taken only
 * when its inode, size and mtime are those its digest was kept under. Returns how many were taken.
 * With `only` (paths relative to the prefix), just those files: after a switch that moved no
 * ctime (a rollback that pruned nothing), the others' entries are still good.
 */
export async function seedListingDigests(
  cache: DigestCache,
  store: ReleaseStore,
  manifest: ReleaseManifest,
  only?: readonly string[],
): Promise<number> {
  const sums = await store.sumsOf(manifest.prefix, manifest.id);
  if (!sums) return 0;
  const p = store.paths(manifest.prefix);
  const prefixBase = `${p.segments.join('/')}/`;
  let taken = 0;
  const files = only ? await statFiles(p.link, only) : await statTree(p.link);
  for (const [rel, st] of files) {
    const sum = sums.get(rel);
    if (!sum || sum.ino !== st.ino || sum.size !== st.size || sum.mtimeNs !== st.mtimeNs) continue;
    const cut = rel.lastIndexOf('/');
    cache.seed(path.join(p.link, ...rel.split('/')), st, sum.sha256, prefixBase + rel.slice(0, cut + 1));
    taken++;
  }
  return taken;
}
