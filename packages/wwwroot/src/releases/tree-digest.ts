import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isTemporaryFileName } from '@ack/host/serving';

// A release's tree digest (docs/releases.md "Manifest and history"), at a cost that follows what
// changed: each release keeps its files' digests with the facts they were read under, and a file
// with the same inode, size and mtime as in the release it was staged from (a hard link no push
// touched) takes its digest from there rather than being read again.

/** One file's digest and the facts of the file it was read from. */
export interface FileSum {
  sha256: string;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

/** A tree's files by relative `/`-path. */
export type TreeSums = Map<string, FileSum>;

export interface TreeSummary {
  files: number;
  bytes: number;
  digest: string;
  sums: TreeSums;
  /** Files read and hashed (the rest were known). */
  hashed: number;
}

/** Entries stat-ed (or folders read) before the event loop gets a turn. */
const SLICE = 256;
/** Files hashed at once. */
const HASH_CONCURRENCY = 4;
/** Files up to this size are read in one call; bigger ones are streamed. */
const READ_WHOLE_BYTES = 1024 * 1024;
const FACTS = { bigint: true, throwIfNoEntry: false } as const;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Every regular file of a tree (temporary files left out, symbolic links not followed) with its
 * facts. Plain synchronous calls a slice at a time: on a local disk a stat is microseconds, far less
 * than a round trip through the thread pool (5,000 files: about a third of the time).
 */
export async function statTree(root: string): Promise<Map<string, fs.BigIntStats>> {
  const out = new Map<string, fs.BigIntStats>();
  const folders: Array<[string, string]> = [[root, '']];
  let done = 0;
  for (let next = folders.pop(); next; next = folders.pop()) {
    const [dir, rel] = next;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (isTemporaryFileName(e.name)) continue;
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      const full = `${dir}${path.sep}${e.name}`;
      if (e.isDirectory()) folders.push([full, r]);
      else if (e.isFile()) {
        const st = fs.statSync(full, FACTS);
        if (st) out.set(r, st);
      }
      if (++done % SLICE === 0) await turn();
    }
  }
  return out;
}

/**
 * The facts of these files of the tree at `root` (paths relative to it, `/` separated), a slice at
 * a time as `statTree` takes them; a file that is not there (any more) is left out.
 */
export async function statFiles(root: string, rels: readonly string[]): Promise<Map<string, fs.BigIntStats>> {
  const out = new Map<string, fs.BigIntStats>();
  for (const [i, rel] of rels.entries()) {
    if (i > 0 && i % SLICE === 0) await turn();
    const st = fs.statSync(path.join(root, ...rel.split('/')), FACTS);
    if (st?.isFile()) out.set(rel, st);
  }
  return out;
}

/** A file listed by the walk was gone (or no longer a file) when it was read: the tree changed meanwhile. */
export class TreeChangedError extends Error {
  constructor(readonly file: string) {
    super(`${file} went away while the tree was read`);
    this.name = 'TreeChangedError';
  }
}

async function sha256File(file: string, size: bigint): Promise<string> {
  try {
    return await readSha256(file, size);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') throw new TreeChangedError(file);
    throw err;
  }
}

async function readSha256(file: string, size: bigint): Promise<string> {
  const h = createHash('sha256');
  if (size <= BigInt(READ_WHOLE_BYTES)) h.update(await fs.promises.readFile(file));
  else for await (const chunk of fs.createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

const sameFacts = (k: FileSum | undefined, st: fs.BigIntStats): k is FileSum =>
  k !== undefined && k.ino === st.ino && k.size === st.size && k.mtimeNs === st.mtimeNs;

/**
 * The tree digest: SHA-256 over the sorted lines `<path>\0<sha256 of content>\n` (content only, no
 * times). A file whose inode, size and mtime are those in one of `known` takes its digest from there;
 * every other file is read. An edit in place moves the mtime, and a replaced file has a new inode,
 * so either is read again.
 */
export async function treeSummary(root: string, known: TreeSums | readonly TreeSums[] = []): Promise<TreeSummary> {
  const sources = known instanceof Map ? [known] : known;
  const facts = await statTree(root);
  const paths = [...facts.keys()].sort();
  const sums: TreeSums = new Map();
  const missing: string[] = [];
  let bytes = 0;
  for (const rel of paths) {
    const st = facts.get(rel)!;
    bytes += Number(st.size);
    let k: FileSum | undefined;
    for (const source of sources) if (sameFacts((k = source.get(rel)), st)) break;
    if (sameFacts(k, st)) sums.set(rel, k);
    else missing.push(rel);
  }
  let at = 0;
  const worker = async () => {
    while (at < missing.length) {
      const rel = missing[at++]!;
      const st = facts.get(rel)!;
      const sha256 = await sha256File(path.join(root, ...rel.split('/')), st.size);
      sums.set(rel, { sha256, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs });
    }
  };
  await Promise.all(Array.from({ length: HASH_CONCURRENCY }, worker));
  const h = createHash('sha256');
  for (const rel of paths) h.update(`${rel}\0${sums.get(rel)!.sha256}\n`);
  const ordered: TreeSums = new Map(paths.map((rel) => [rel, sums.get(rel)!]));
  return {
    files: paths.length,
    bytes,
    digest: `sha256:${h.digest('hex')}`,
    sums: ordered,
    hashed: missing.length,
  };
}

/** The sums as kept beside a release (`<id>.sums`): one JSON document. */
export function formatSums(sums: TreeSums): string {
  const files = [...sums].map(([rel, s]) => [rel, s.sha256, String(s.ino), String(s.size), String(s.mtimeNs)]);
  return `${JSON.stringify({ files })}\n`;
}

const DIGITS = /^[0-9]{1,30}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The sums read back, or undefined when the text is not a whole sums document (a cache: a release
 * without it has its files read).
 */
export function parseSums(text: string): TreeSums | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const files = (doc as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) return undefined;
  const out: TreeSums = new Map();
  for (const f of files) {
    if (!Array.isArray(f) || f.length !== 5) return undefined;
    const [rel, sha256, ino, size, mtimeNs] = f as unknown[];
    if (typeof rel !== 'string' || typeof sha256 !== 'string' || !HEX64.test(sha256)) return undefined;
    if (![ino, size, mtimeNs].every((n) => typeof n === 'string' && DIGITS.test(n))) return undefined;
    out.set(rel, {
      sha256,
      ino: BigInt(ino as string),
      size: BigInt(size as string),
      mtimeNs: BigInt(mtimeNs as string),
    });
  }
  return out;
}

/**
 * Makes `dest` a tree of hard links to every file of `src` (folders made, symbolic links copied,
 * temporary files left out). Synchronous calls a slice at a time, as `statTree`: a link is
 * microseconds, and 5,000 of them each through the thread pool took three times as long.
 */
export async function linkTree(src: string, dest: string): Promise<void> {
  fs.mkdirSync(dest, { recursive: true });
  const folders: Array<[string, string]> = [[src, dest]];
  let done = 0;
  for (let next = folders.pop(); next; next = folders.pop()) {
    const [from, to] = next;
    for (const e of fs.readdirSync(from, { withFileTypes: true })) {
      if (isTemporaryFileName(e.name)) continue;
      const a = `${from}${path.sep}${e.name}`;
      const b = `${to}${path.sep}${e.name}`;
      if (e.isDirectory()) {
        fs.mkdirSync(b);
        folders.push([a, b]);
      } else if (e.isFile()) fs.linkSync(a, b);
      else if (e.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(a), b);
      if (++done % SLICE === 0) await turn();
    }
  }
}
