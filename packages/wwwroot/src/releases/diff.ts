import fs from 'node:fs/promises';
import path from 'node:path';

// The files two releases differ in, without reading one byte: a stage starts as hard links of the
// live release, so a file no push touched has the same inode in both (docs/releases.md).

/** Relative paths (`/` separated) present in one tree only, or with another inode or size. */
export async function changedFiles(fromDir: string | null, toDir: string): Promise<string[]> {
  const [from, to] = await Promise.all([fromDir ? filesOf(fromDir) : new Map<string, string>(), filesOf(toDir)]);
  const out: string[] = [];
  for (const [rel, id] of to) if (from.get(rel) !== id) out.push(rel);
  for (const rel of from.keys()) if (!to.has(rel)) out.push(rel);
  return out.sort();
}

/** Every regular file of a tree: relative path to `inode:size`. */
async function filesOf(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, rel: string[]): Promise<void> => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full, [...rel, e.name]);
      else if (e.isFile()) {
        const st = await fs.stat(full).catch(() => null);
        if (st) out.set([...rel, e.name].join('/'), `${st.ino}:${st.size}`);
      }
    }
  };
  await walk(root, []);
  return out;
}
