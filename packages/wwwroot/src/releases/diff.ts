import { statTree, type TreeSums } from './tree-digest.js';

// The files two releases differ in, without reading one byte: a stage starts as hard links of the
// live release, so a file no push touched has the same inode in both (docs/releases.md).

/** Relative paths (`/` separated) present in one tree only, or with another inode or size. */
export async function changedFiles(fromDir: string | null, toDir: string): Promise<string[]> {
  const from = fromDir ? await statTree(fromDir) : new Map();
  const to = await statTree(toDir);
  const out: string[] = [];
  for (const [rel, st] of to) {
    const before = from.get(rel);
    if (!before || before.ino !== st.ino || before.size !== st.size) out.push(rel);
  }
  for (const rel of from.keys()) if (!to.has(rel)) out.push(rel);
  return out.sort();
}

/** The same from two releases' digests (inode and size as each was committed): no disk access. */
export function changedSums(from: TreeSums, to: TreeSums): string[] {
  const out: string[] = [];
  for (const [rel, s] of to) {
    const before = from.get(rel);
    if (!before || before.ino !== s.ino || before.size !== s.size) out.push(rel);
  }
  for (const rel of from.keys()) if (!to.has(rel)) out.push(rel);
  return out.sort();
}
